"""The secure profile's Elasticsearch: its modules laid out from Maven jars, its file realm's
password hash, and how Tally's clients are told to log in."""

import base64
import hashlib

import pytest
from tally.components.elasticsearch import Elasticsearch, artifact, pbkdf2_hash
from tally.jobs import JOBS, elasticsearch_security_args
from tally.settings import Settings


def test_a_jar_is_known_by_its_artifact_whatever_its_version():
    from pathlib import Path

    assert artifact(Path("log4j-api-2.17.1.jar")) == "log4j-api"
    assert artifact(Path("netty-buffer-4.1.49.Final.jar")) == "netty-buffer"
    assert artifact(Path("java-support-7.5.1.jar")) == "java-support"
    assert artifact(Path("HdrHistogram-2.1.9.jar")) == "HdrHistogram"


def test_the_password_hash_is_the_file_realms_pbkdf2_and_checks_as_elasticsearch_checks_it():
    stored = pbkdf2_hash("s3cret", salt=bytes(range(32)))
    prefix, rounds_salt_key = stored[: len("{PBKDF2}")], stored[len("{PBKDF2}") :]
    rounds, salt, key = rounds_salt_key.split("$")
    assert prefix == "{PBKDF2}" and rounds == "10000"
    # Elasticsearch: PBKDF2WithHmacSHA512 over the decoded salt, a 256-bit key, both base64
    expected = hashlib.pbkdf2_hmac("sha512", b"s3cret", base64.b64decode(salt), 10000, dklen=32)
    assert base64.b64decode(key) == expected and len(base64.b64decode(salt)) == 32
    assert pbkdf2_hash("s3cret") != pbkdf2_hash("s3cret")  # a salt of its own each time


def test_each_security_module_holds_only_the_jars_the_classpath_it_extends_lacks(tmp_path):
    s = Settings.load({"TALLY_HOME": str(tmp_path / "home"), "TALLY_SECURE": "1"})
    es = Elasticsearch(s, log=lambda *a: None)
    home = tmp_path / "es"
    (home / "lib").mkdir(parents=True)
    for jar in ("elasticsearch-7.10.2.jar", "log4j-api-2.17.1.jar", "elasticsearch-core-7.10.2.jar"):
        (home / "lib" / jar).write_text("")
    dists = {
        "elasticsearch-x-pack-core": (
            "x-pack-core-7.10.2.jar",
            "httpclient-4.5.10.jar",
            "log4j-api-2.11.1.jar",
            "elasticsearch-core-7.10.2.jar",
            "netty-common-4.1.49.Final.jar",
        ),
        "elasticsearch-x-pack-security": (
            "x-pack-security-7.10.2.jar",
            "httpclient-4.5.10.jar",
            "opensaml-core-3.4.5.jar",
            "netty-common-4.1.49.Final.jar",
        ),
    }
    for dist, jars in dists.items():
        lib = s.dist(dist) / "lib"
        lib.mkdir(parents=True)
        for jar in jars:
            (lib / jar).write_text("")
    es.lay_out_security_modules(home)
    core = sorted(p.name for p in (home / "modules" / "x-pack-core").glob("*.jar"))
    security = sorted(p.name for p in (home / "modules" / "x-pack-security").glob("*.jar"))
    # an older log4j-api than the server's is not a second copy beside it
    assert core == ["httpclient-4.5.10.jar", "netty-common-4.1.49.Final.jar", "x-pack-core-7.10.2.jar"]
    assert security == ["opensaml-core-3.4.5.jar", "x-pack-security-7.10.2.jar"]
    descriptor = (home / "modules" / "x-pack-security" / "plugin-descriptor.properties").read_text()
    assert "extended.plugins=x-pack-core" in descriptor and "elasticsearch.version=7.10.2" in descriptor


def test_the_secure_profile_asks_https_and_a_login_and_the_ordinary_stack_neither(tmp_path):
    plain = Settings.load({"TALLY_HOME": str(tmp_path)})
    assert plain.elasticsearch_url().startswith("http://") and plain.elasticsearch_requests_args() == {}
    assert elasticsearch_security_args(plain) == []
    secure = Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_SECURE": "1"})
    assert secure.elasticsearch_url().startswith("https://")
    assert secure.get("TALLY_ELASTICSEARCH_USERNAME") == "tally"
    assert secure.get("TALLY_ELASTICSEARCH_SSL_TRUSTSTORE") == str(secure.local_ca_pem())


def test_the_jobs_elasticsearch_login_is_a_password_file_never_a_password(tmp_path):
    login = {"TALLY_HOME": str(tmp_path), "TALLY_ELASTICSEARCH_USERNAME": "tally", "TALLY_ELASTICSEARCH_PASSWORD": "s3"}
    with pytest.raises(ValueError, match="TALLY_ELASTICSEARCH_PASSWORD_FILE"):
        elasticsearch_security_args(Settings.load(login))
    s = Settings.load({**login, "TALLY_ELASTICSEARCH_PASSWORD_FILE": "/run/secrets/es"})
    writer = next(j for j in JOBS if "elasticsearch" in j.stores)
    args = writer.args(s)
    assert args[args.index("--elasticsearch.password.file") + 1] == "/run/secrets/es" and "s3" not in args
    assert all("--elasticsearch.username" not in j.args(s) for j in JOBS if "elasticsearch" not in j.stores)
