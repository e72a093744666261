"""docker-compose.yml cannot run here (no Docker engine, and no container runtime from Debian's
archive runs its images here), so this keeps it honest statically: the same services, ports,
config files and versions as the local stack ./tally up starts, every address and the admin token
set, secrets from the shell, the pipeline made by `./tally deploy` in a one-shot service the others
wait for, failures that fail, Tally's images not root."""

import re

import pytest
import yaml
from tally.settings import REPO, Settings
from tally.stack import Stack

COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
# ports only the servers talk on among themselves; compose keeps them inside its network
INTERNAL = {"controller", "storage", "transport", "rpc"}
# Not in compose yet: the local broker's SASL_SSL listener needs a CA and key store made inside
# compose and a SCRAM user, which come with compose's rework into a secured pipeline.
NOT_IN_COMPOSE = {("kafka", "secure")}


@pytest.fixture(scope="module")
def stack():
    return Stack(Settings.load({}), log=lambda *_: None)


def published(service: str) -> dict[int, str]:
    out = {}
    for spec in SERVICES[service].get("ports", []):
        host_ip, host_port, _ = str(spec).split(":")
        out[int(host_port)] = host_ip
    return out


def test_every_local_component_is_a_compose_service(stack):
    missing = [c.name for c in stack.components if c.name not in SERVICES]
    assert missing == []


def test_client_ports_match_the_local_stack_and_bind_loopback(stack):
    for c in stack.components:
        ports = published(c.name)
        for label, port in c.ports().items():
            if label in INTERNAL or (c.name, label) in NOT_IN_COMPOSE:
                continue
            assert port in ports, f"{c.name} {label} port {port} is not published by compose"
    for name in SERVICES:
        for port, ip in published(name).items():
            assert ip == "127.0.0.1", f"{name} publishes {port} beyond loopback"


def test_mounted_files_exist_in_the_repo():
    mounts = 0
    for name, svc in SERVICES.items():
        for vol in svc.get("volumes", []):
            src = vol.split(":")[0]
            if src.startswith("./") and "/target/" in src:
                # a build output (mvn package makes it): its module must be one of the build's
                module = src[2:].split("/target/")[0]
                assert (REPO / module / "pom.xml").exists(), f"{name} mounts {src} of no Maven module"
                assert f"<module>{module}</module>" in (REPO / "pom.xml").read_text(), f"{module} is not built"
            elif src.startswith("./"):
                mounts += 1
                assert (REPO / src).exists(), f"{name} mounts missing {src}"
    assert mounts >= 3


def test_compose_mounts_the_local_stack_s_config_files():
    def mounts(service):
        return {v.split(":")[0] for v in SERVICES[service].get("volumes", [])}

    assert "./infra/prometheus/prometheus.compose.yml" in mounts("prometheus")
    assert "./infra/sql/catalogs.compose" in mounts("sql-gateway")


def pom_version(dist: str, artifact: str) -> str:
    pom = (REPO / "infra" / "dist" / dist / "pom.xml").read_text()
    return re.search(rf"<artifactId>{artifact}</artifactId>\s*<version>([^<]+)</version>", pom).group(1)


def image(service: str) -> tuple[str, str]:
    name, _, tag = SERVICES[service]["image"].rpartition(":")
    return name, tag


def test_every_image_is_at_the_launcher_s_version():
    """One source of truth: the versions ./tally up fetches (infra/dist/*/pom.xml, Debian 12's
    packages) are the images compose runs."""
    assert image("kafka") == ("apache/kafka", pom_version("kafka", "kafka_2.13"))
    assert image("cassandra") == ("cassandra", pom_version("cassandra", "cassandra-all"))
    es = pom_version("elasticsearch", "elasticsearch")
    assert image("elasticsearch") == ("docker.elastic.co/elasticsearch/elasticsearch", es)
    flink = pom_version("flink", "flink-clients")
    for name in ("flink-jobmanager", "flink-taskmanager", "sql-gateway"):
        assert image(name) == ("flink", f"{flink}-scala_2.12-java17"), name
    assert image("connect") == ("quay.io/debezium/connect", pom_version("connect", "debezium-connector-postgres"))
    jmx = pom_version("jmx-exporter", "jmx_prometheus_javaagent")
    assert COMPOSE["x-jmx-agent"]["image"] == f"bitnami/jmx-exporter:{jmx}"
    from tally.packages import REQUIRED

    pg_major = re.search(r"postgresql-(\d+)$", REQUIRED["/usr/lib/postgresql/15/bin/postgres"]).group(1)
    assert image("postgres") == ("postgres", pg_major)
    # Debian 12's prometheus, prometheus-elasticsearch-exporter and prometheus-postgres-exporter
    assert image("prometheus")[1].startswith("v2.42.")
    assert image("elasticsearch-exporter")[1] == "v1.5.0"
    assert image("postgres-exporter")[1] == "v0.11.1"


def env(service: str) -> dict[str, str]:
    return {k: str(v) for k, v in SERVICES[service].get("environment", {}).items()}


def test_secrets_come_from_the_shell_and_compose_refuses_to_start_without_them():
    text = (REPO / "docker-compose.yml").read_text()
    for name in ("TALLY_ADMIN_TOKEN", "TALLY_POSTGRES_PASSWORD", "TALLY_CDC_PASSWORD", "TALLY_CONTROL_ADMIN_PASSWORD"):
        assert f"${{{name}:?" in text, f"{name} is not required from the shell"
    for service in SERVICES:
        for key, value in env(service).items():
            if re.search(r"PASSWORD|TOKEN|_PASS$", key):
                assert re.fullmatch(r"\$\{TALLY_[A-Z_]+:\?[^}]*\}", value), f"{service} {key} is written in the file"


def host_of(address: str) -> str:
    return address.split("//")[-1].split(":")[0]


def test_tally_s_services_have_every_address_and_the_admin_token():
    gateway = env("gateway")
    for key in ("TALLY_KAFKA_BOOTSTRAP", "TALLY_REGISTRY_URL", "TALLY_CASSANDRA_CONTACT", "TALLY_ELASTICSEARCH_URL"):
        assert host_of(gateway.get(key, "")) in SERVICES, f"gateway {key}"
    assert gateway["TALLY_GATEWAY_ADMIN_TOKEN"].startswith("${TALLY_ADMIN_TOKEN:?")
    # the admin API's own role (DML on namespaces), not the superuser
    assert gateway["TALLY_CONTROL_POSTGRES_USER"] == Settings.load({}).get("TALLY_CONTROL_ADMIN_USER")
    assert env("registry")["TALLY_REGISTRY_ADMIN_TOKEN"].startswith("${TALLY_ADMIN_TOKEN:?")


def test_the_deploy_service_runs_tally_deploy_against_compose_s_servers():
    """The pipeline is made by the command users run against their own clusters: every step of
    ./tally deploy (topics, tally_meta, the control plane and its seed namespaces, the connector,
    the schemas, the jobs on Flink), aimed by infra/compose/deploy.env at compose's services."""
    from tally.deploy import STEPS
    from tally.settings import read_env_file

    dockerfile = (REPO / SERVICES["deploy"]["build"]["dockerfile"]).read_text()
    assert 'ENTRYPOINT ["./tally", "deploy", "--env", "infra/compose/deploy.env"]' in dockerfile
    names = [s.name for s in STEPS]  # test_deploy.py runs each of them against the local stack
    assert "flink jobs" in names and "postgres control plane" in names  # the jobs; the seeds with the roles
    settings = read_env_file(REPO / "infra" / "compose" / "deploy.env")
    assert set(settings) <= set(read_env_file(REPO / "infra" / "tally.env")), "a name the launcher does not have"
    for key in ("TALLY_KAFKA_BOOTSTRAP", "TALLY_REGISTRY_URL", "TALLY_CASSANDRA_CONTACT", "TALLY_ELASTICSEARCH_URL"):
        assert host_of(settings[key]) in SERVICES, key
    for key in ("TALLY_CONNECT_URL", "TALLY_FLINK_URL", "TALLY_POSTGRES_ADDRESS"):
        assert host_of(settings[key]) in SERVICES, key
    # it starts once every server it provisions is healthy; what needs its work waits for its success
    needs = SERVICES["deploy"]["depends_on"]
    for server in ("kafka", "registry", "cassandra", "elasticsearch", "postgres", "connect", "flink-jobmanager"):
        assert needs[server]["condition"] == "service_healthy", server
        assert "healthcheck" in SERVICES[server], f"{server} has no healthcheck to wait on"
    for service in ("gateway", "runq-exporter", "sql-gateway", "postgres-exporter"):
        assert SERVICES[service]["depends_on"]["deploy"]["condition"] == "service_completed_successfully", service


def test_failures_fail():
    assert "|| true" not in (REPO / "docker-compose.yml").read_text()
    for name, svc in SERVICES.items():
        assert isinstance(svc.get("depends_on", {}), dict), f"{name}: depends_on without a condition"


def test_tally_s_images_run_as_a_user_not_root():
    for dockerfile in ("gateway/Dockerfile", "schemas/registry/Dockerfile", "infra/compose/deploy.Dockerfile"):
        users = re.findall(r"^USER\s+(\S+)", (REPO / dockerfile).read_text(), re.M)
        assert users and users[-1] not in ("root", "0"), dockerfile
    # the one exception, said in the file: the eBPF exporter loads BPF programs
    assert SERVICES["runq-exporter"].get("privileged") is True


def test_compose_prometheus_scrapes_the_same_jobs(stack):
    prom = yaml.safe_load((REPO / "infra" / "prometheus" / "prometheus.compose.yml").read_text())
    jobs = {j["job_name"] for j in prom["scrape_configs"]}
    assert jobs == set(stack.component("prometheus").targets)


def test_exporter_image_builds_with_go_mods_go_and_the_one_recipe():
    root = REPO / "connectors" / "runq-exporter"
    go_mod = re.search(r"^go (\d+\.\d+)", (root / "go.mod").read_text(), re.M).group(1)
    dockerfile = (root / "Dockerfile").read_text()
    image = re.search(r"^FROM golang:(\d+\.\d+)", dockerfile, re.M).group(1)
    assert image == go_mod, f"Dockerfile builds with Go {image}, go.mod says {go_mod}"
    assert "./build.sh" in dockerfile  # the recipe ./tally up runs, not a copy of it


def test_the_pipeline_weighs_less_cpu_than_the_request_path_as_in_the_local_stack(stack):
    # nice 10 against 0 is 110 against 1,024 in the kernel's weights; compose says it in CPU shares
    for c in stack.components:
        shares = SERVICES[c.name].get("cpu_shares")
        if c.background_cpu:
            assert shares == 110, f"{c.name}: cpu_shares {shares}"
        else:
            assert shares is None, f"{c.name} answers callers, yet has cpu_shares {shares}"
