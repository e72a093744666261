"""./tally: the local stack's command line (up, down, status, logs, test, build)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import build, packages
from .jobs import JOBS, Jobs
from .settings import REPO, Settings
from .stack import Stack, StackError, tail_lines


def say(msg: str) -> None:
    print(msg, flush=True)


def cmd_up(args, settings: Settings) -> int:
    t0 = time.monotonic()
    phases: list[tuple[str, float]] = []

    def phase(name: str, since: float) -> float:
        now = time.monotonic()
        phases.append((name, now - since))
        return now

    packages.ensure_packages(say)
    t = phase("packages", t0)
    if not args.no_build:
        build.build_java(say)
    t = phase("build", t)
    stack = Stack(settings, say)
    started = stack.up()
    t = phase("servers", t)
    deployed = Jobs(settings, say).ensure_deployed()
    phase("jobs", t)
    if not started and not deployed:
        say("the stack is already running (nothing to do)")
    print_status(stack)
    say(f"up took {time.monotonic() - t0:.1f}s (" + ", ".join(f"{n} {s:.1f}s" for n, s in phases) + ")")
    return 0


def cmd_down(args, settings: Settings) -> int:
    stack = Stack(settings, say)
    stopped = stack.down(wipe=args.wipe)
    if not stopped:
        say("nothing was running")
    return 0


def print_status(stack: Stack) -> None:
    rows = stack.status()
    head = ("COMPONENT", "PID", "PORTS", "HEALTH", "RSS_MB", "VERSION", "URL")
    table = [head] + [(r.name, r.pid, r.ports, r.health, r.rss_mb, r.version, r.url) for r in rows]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(head))]
    for row in table:
        say("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())


def cmd_deploy(args, settings: Settings) -> int:
    from .deploy import deploy

    if args.env is not None:
        if not args.env.is_file():
            raise ValueError(f"--env {args.env}: no such file")
        settings = Settings.load(overlay=args.env)
    return deploy(settings, check=args.check, say=say)


def cmd_status(args, settings: Settings) -> int:
    stack = Stack(settings, say)
    print_status(stack)
    say(f"admin token ({settings.home / 'admin-token'} unless TALLY_ADMIN_TOKEN is set): {settings.admin_token()}")
    for c in stack.components:
        err = stack.state.components.get(c.name, {}).get("error")
        if err and not stack.running(c):
            say(f"{c.name}: last start failed: {err}  (./tally logs {c.name})")
    return 0


def cmd_logs(args, settings: Settings) -> int:
    stack = Stack(settings, say)
    c = stack.component(args.component)
    if not c.log_file.exists():
        say(f"no log yet for {c.name} ({c.log_file})")
        return 1
    if args.follow:
        os.execvp("tail", ["tail", "-n", str(args.lines), "-F", str(c.log_file)])
    for line in tail_lines(c.log_file, args.lines):
        print(line)
    return 0


def cmd_jobs(args, settings: Settings) -> int:
    jobs = Jobs(settings, say)
    if args.action == "list":
        for j in jobs.rest.jobs():
            say(f"{j['jid']}  {j['state']:<10} {j['name']}")
        return 0
    if args.action == "rescale":
        if not args.name or args.parallelism is None:
            say("usage: ./tally jobs rescale <job> <parallelism>")
            return 2
        say(f"{args.name}: resumed at parallelism {args.parallelism} as {jobs.rescale(args.name, args.parallelism)}")
        return 0
    names = [args.name] if args.name else [spec.name for spec in JOBS]
    for name in names:
        if args.action == "deploy":
            spec = next(s for s in JOBS if s.name == name)
            say(f"{name}: {jobs.deploy(spec)}")
        elif args.action == "stop-with-savepoint":
            say(f"{name}: savepoint {jobs.stop_with_savepoint(name)}")
        elif args.action == "resume":
            say(f"{name}: resumed as {jobs.resume(name)}")
        elif args.action == "cancel":
            jobs.cancel(name)
            say(f"{name}: cancelled")
    return 0


def cmd_flink(args, settings: Settings) -> int:
    """Flink's own CLI against the stack's session cluster (its REST address from the config)."""
    flink = Stack(settings, say).component("flink-jobmanager")
    argv, env = flink.cli(args.args)
    return subprocess.run(argv, env=env).returncode


def cmd_alerts(args, settings: Settings) -> int:
    """NoisyNeighborJob's alerts: the containers FIRING now, then the recent FIRING and RESOLVED."""
    from datetime import timedelta

    from . import alerts

    for line in alerts.report(alerts.read(settings), timedelta(minutes=args.minutes)):
        say(line)
    return 0


def cmd_runq(args, settings: Settings) -> int:
    """A PNG heatmap of run-queue latency per container over time (from the stack's Prometheus)."""
    from . import runq_plot

    prometheus = Stack(settings, say).component("prometheus").url()
    out = Path(args.out) if args.out else settings.home / "runq-heatmap.png"
    say(f"wrote {runq_plot.plot(prometheus, out, minutes=args.minutes)}")
    return 0


def cmd_sql(args, settings: Settings) -> int:
    """Flink's SQL client in gateway mode against the stack's SQL gateway (the tally catalog)."""
    gateway = Stack(settings, say).component("sql-gateway")
    argv, env = gateway.client(statements=args.execute, file=args.file, streaming=args.streaming)
    if args.execute is None and args.file is None:
        return subprocess.run(argv, env=env).returncode
    # Flink's client exits 0 after a failed statement: a script's caller gets 1
    failed = False
    try:
        with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
            for line in p.stdout:
                print(line, end="", flush=True)
                failed = failed or "[ERROR] Could not execute SQL statement" in line
    finally:
        gateway.script_path().unlink(missing_ok=True)
    return 1 if failed or p.returncode else 0


def cmd_deadletters(args, settings: Settings) -> int:
    """list, show, replay: the dead-letter topic (see tally/deadletters.py)."""
    from . import deadletters as dl

    letters = dl.DeadLetters(settings)
    all_letters = letters.read()
    if args.action == "show":
        wanted = dl.parse_ref(args.ref)
        found = [d for d in all_letters if (d.partition, d.offset) == wanted]
        if not found:
            say(f"no dead letter {args.ref} on {dl.DEAD_LETTER_TOPIC}")
            return 2
        say(dl.show(found[0], letters.registry))
        return 0
    chosen = [d for d in all_letters if dl.matches(d, args.reason, args.namespace)]
    if args.action == "list":
        for d in chosen:
            say(dl.line(d))
        say(f"{len(chosen)} of {len(all_letters)} dead letters")
        return 0
    if args.ref:
        refs = {dl.parse_ref(r) for r in args.ref}
        chosen = [d for d in chosen if (d.partition, d.offset) in refs]
    if not chosen:
        say("nothing to replay")
        return 0
    if args.dry_run:
        for d in chosen:
            say("would replay " + dl.line(d))
        return 0
    n = letters.replay(chosen)
    say(f"replayed {n} records to their topics (the jobs store a replayed event once)")
    return 0


REPAIR_WAIT_S = 60  # how long recount --repair waits for the rollup job to apply the repair


def cmd_counters(args, settings: Settings) -> int:
    """recount: the gateway's Recount endpoint (CounterReader) on a counter's event log."""
    import requests

    body = {"namespace": args.namespace, "counter_name": args.counter, "repair": args.repair}
    if args.start:
        body["from"] = args.start
    if args.end:
        body["to"] = args.end
    url = f"http://{settings.host}:{settings.port('TALLY_GATEWAY_PORT')}/v1/counter/Recount"
    r = requests.post(url, json=body, headers=settings.admin_headers(), timeout=300)
    if r.status_code != 200:
        err = r.json().get("error", {}) if r.headers.get("Content-Type", "").startswith("application/json") else {}
        say(f"recount failed ({r.status_code}): {err.get('code', '')} {err.get('message', r.text[:300])}")
        return 2
    o = r.json()
    say(
        f"{args.namespace}/{o['counter_name']}: {o['events']} events from {o['from']} to {o['to']}: "
        f"recounted {o['recounted']}, rollup {o['rollup_count']} at {o['last_rollup_ts']}"
    )
    if not o["compared"]:
        say("  (to is not the rollup time, so there is nothing to compare with)")
        return 0
    if o["difference"] == 0:
        say("  the rollup agrees with the event log")
        return 0
    if o["repaired"]:
        # the repair is a RECOUNT event the rollup job applies: wait until the rollup agrees
        say(f"  difference {o['difference']}: repair {o['repair_event_id']} sent to the rollup job")
        check = {k: v for k, v in body.items() if k != "repair"}
        deadline = time.monotonic() + REPAIR_WAIT_S
        while time.monotonic() < deadline:
            time.sleep(0.5)
            c = requests.post(url, json=check, headers=settings.admin_headers(), timeout=300)
            if c.status_code == 200 and c.json().get("difference") == 0:
                now = c.json()
                say(f"  repaired: the rollup at {now['last_rollup_ts']} holds {now['rollup_count']}, as the log counts")
                return 0
        say(f"  the rollup does not agree yet after {REPAIR_WAIT_S} s: is the counter job running? (dead letters:")
        say("  ./tally deadletters list --reason RECOUNT_STALE)")
        return 1
    say(f"  difference {o['difference']}: run again with --repair to write the recounted value")
    return 1


def cmd_build(args, settings: Settings) -> int:
    build.build_java(say, force=True)
    return 0


def cmd_test(args, settings: Settings) -> int:
    """Format and lint checks, unit tests (Maven, pytest, go), then the stack (started if needed),
    then integration tests."""
    from .components import runq_exporter

    t0 = time.monotonic()
    results: list[tuple[str, int]] = []
    py = sys.executable
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "infra"), str(REPO / "bench")]))
    suite = REPO / "infra" / "tests" / "integration"
    if settings.nodes == 3:  # the three-node profile's own suite; the rest ran on one node
        args.integration_only, suite = True, suite / "test_three_nodes.py"
    if settings.secure:  # the secure profile's own suite: refusals, deploy, end to end
        args.integration_only, suite = True, suite / "test_secure_profile.py"
    if not args.integration_only:
        results += format_checks(py, runq_exporter)
        results.append(("maven unit tests", run(build.mvn_cmd("-B", "test"))))
        results.append(
            ("python unit tests", run([py, "-m", "pytest", "-q", str(REPO / "infra" / "tests" / "unit")], env))
        )
        packages.ensure_packages(say)
        runq_exporter.build(settings.home, say)  # bpf2go output is generated, not committed
        results.append(("go vet", run([runq_exporter.go_binary(), "vet", "-C", str(runq_exporter.SRC), "./..."])))
        results.append(
            ("go unit tests", run([runq_exporter.go_binary(), "test", "-C", str(runq_exporter.SRC), "./..."]))
        )
    if not args.unit_only:
        packages.ensure_packages(say)
        build.build_java(say)
        Stack(settings, say).up()
        Jobs(settings, say).ensure_deployed()
        results.append(
            (
                "python integration tests",
                run(
                    [
                        py,
                        "-m",
                        "pytest",
                        "-q",
                        "-p",
                        "no:cacheprovider",
                        "--tb=short",
                        "-rf",
                        # the slowest tests named in every run's log, so the suite's 45 minutes are watched
                        "--durations=25",
                        str(suite),
                    ],
                    env,
                ),
            )
        )
    failed = [name for name, rc in results if rc != 0]
    say(f"\n./tally test took {time.monotonic() - t0:.0f}s")
    for name, rc in results:
        say(f"  {'PASS' if rc == 0 else 'FAIL'}  {name}")
    return 1 if failed else 0


def format_checks(py: str, runq_exporter) -> list[tuple[str, int]]:
    """The tree's formats and lints: Java (Spotless, palantir-java-format), Python (ruff), Go (gofmt, go vet).
    Fix with: mvn spotless:apply; ruff format infra bench/tally_bench && ruff check --fix infra bench/tally_bench;
    gofmt -w connectors/runq-exporter."""
    ruff = [py, "-m", "ruff"]
    python_trees = [str(REPO / "infra"), str(REPO / "bench" / "tally_bench")]
    go_src = str(runq_exporter.SRC)
    gofmt_bin = str(Path(runq_exporter.go_binary()).with_name("gofmt"))
    gofmt = subprocess.run([gofmt_bin, "-l", go_src], capture_output=True, text=True)
    unformatted = gofmt.stdout.strip()
    if unformatted:
        say(f"gofmt: not formatted:\n{unformatted}")
    return [
        ("java format (spotless:check)", run(build.mvn_cmd("-B", "-q", "spotless:check"))),
        ("python lint (ruff check)", run(ruff + ["check", *python_trees])),
        ("python format (ruff format --check)", run(ruff + ["format", "--check", *python_trees])),
        ("go format (gofmt -l)", 1 if gofmt.returncode != 0 or unformatted else 0),
        # the reference site, strictly: a broken link, anchor or OpenAPI reference fails
        (
            "docs (mkdocs build --strict)",
            run(mkdocs_cmd(py, "build", "--strict", "--site-dir", tempfile.mkdtemp(prefix="tally-site-"))),
        ),
    ]


def cmd_bench_harness(args, settings: Settings) -> int:
    """`./tally bench ...` and `./tally profile ...`: the harness in bench/tally_bench, as a process
    of its own (the launcher does not import it; the harness imports the launcher)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "infra"), str(REPO / "bench")]))
    return subprocess.run([sys.executable, "-m", "tally_bench", args.harness, *args.rest], env=env).returncode


def mkdocs_cmd(py: str, *args: str) -> list[str]:
    return [py, "-m", "mkdocs", *args, "-f", str(REPO / "mkdocs.yml")]


def cmd_docs(args, settings: Settings) -> int:
    """The reference site (docs/, mkdocs): built strictly into TALLY_HOME/site, or served live."""
    if args.serve:
        return run(mkdocs_cmd(sys.executable, "serve", "-a", f"{settings.host}:{args.port}"))
    site = settings.home / "site"
    rc = run(mkdocs_cmd(sys.executable, "build", "--strict", "--site-dir", str(site)))
    if rc == 0:
        say(f"the docs: {site}/index.html")
    return rc


def run(cmd: list[str], env: dict | None = None) -> int:
    say(f"\n$ {' '.join(cmd)}")
    return subprocess.run(cmd, cwd=REPO, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="tally",
        description="Tally's local stack and tools. Any command takes --nodes 3: the profile of three Kafka "
        "brokers and three Cassandra nodes (its own state in .tally/nodes-3; same as TALLY_NODES=3), or "
        "--secure: the profile with every server's authentication and TLS on (.tally/secure; TALLY_SECURE=1).",
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="install, fetch, build and start the whole stack (idempotent)")
    up.add_argument("--no-build", action="store_true", help="do not build the Java modules")
    up.set_defaults(fn=cmd_up)
    down = sub.add_parser("down", help="stop everything the stack started (by PID)")
    down.add_argument("--wipe", action="store_true", help="also delete data, configs and logs")
    down.set_defaults(fn=cmd_down)
    sub.add_parser("status", help="pid, ports, health, version and URL of each component").set_defaults(fn=cmd_status)
    dep = sub.add_parser(
        "deploy",
        help="make Tally work on clusters someone else runs: topics, tally_meta, the control plane's database and "
        "roles, the Debezium connector, the schemas (idempotent; without --env: the local stack)",
    )
    dep.add_argument("--env", type=Path, help="the deployment's settings (KEY=value lines, as infra/tally.env)")
    dep.add_argument("--check", action="store_true", help="change nothing; name every difference (exit 1 if any)")
    dep.set_defaults(fn=cmd_deploy)
    logs = sub.add_parser("logs", help="a component's log")
    logs.add_argument("component")
    logs.add_argument("-n", "--lines", type=int, default=100)
    logs.add_argument("-f", "--follow", action="store_true")
    logs.set_defaults(fn=cmd_logs)
    # the benchmark harness lives in bench/tally_bench (its own CLI); these hand the command to it
    for name, text in (
        ("bench", "run a benchmark against the running stack, or `bench table` (bench/tally_bench)"),
        ("profile", "async-profiler in a component's JVM under one operation of bench cost (bench/tally_bench)"),
    ):
        d = sub.add_parser(name, help=text, add_help=False)
        d.add_argument("rest", nargs=argparse.REMAINDER)
        d.set_defaults(fn=cmd_bench_harness, harness=name)
    jobs = sub.add_parser("jobs", help="Tally's Flink jobs on the session cluster")
    jobs.add_argument("action", choices=["list", "deploy", "stop-with-savepoint", "resume", "rescale", "cancel"])
    jobs.add_argument("name", nargs="?", choices=[spec.name for spec in JOBS], help="default: every Tally job")
    jobs.add_argument("parallelism", nargs="?", type=int, help="rescale: the job's new parallelism")
    jobs.set_defaults(fn=cmd_jobs)
    flink = sub.add_parser(
        "flink", help="Flink's own CLI against the session cluster (./tally flink list, stop, run -s ... -p N)"
    )
    flink.add_argument("args", nargs=argparse.REMAINDER)
    flink.set_defaults(fn=cmd_flink)
    al = sub.add_parser("alerts", help="noisy-neighbor alerts: FIRING now, and the recent ones (tally.alerts)")
    al.add_argument("--minutes", type=int, default=60, help="how far back 'recent' goes (default 60)")
    al.set_defaults(fn=cmd_alerts)
    rq = sub.add_parser("runq", help="run-queue latency: `runq plot` writes a PNG heatmap per container over time")
    rq.add_argument("action", choices=["plot"])
    rq.add_argument("--minutes", type=int, default=30, help="how far back (default 30)")
    rq.add_argument("--out", help="the PNG to write (default .tally/runq-heatmap.png)")
    rq.set_defaults(fn=cmd_runq)
    sql = sub.add_parser(
        "sql", help="Flink SQL over Tally's tables: the SQL client on the stack's SQL gateway (-e or -f run and print)"
    )
    what = sql.add_mutually_exclusive_group()
    what.add_argument("-e", "--execute", help="statements to run, results printed as tables")
    what.add_argument("-f", "--file", help="a .sql file to run, results printed as tables")
    sql.add_argument(
        "--streaming",
        action="store_true",
        help="-e/-f in streaming mode (a changelog; default batch: final tables, Kafka tables need "
        "/*+ OPTIONS('scan.bounded.mode'='latest-offset') */)",
    )
    sql.set_defaults(fn=cmd_sql)
    counters = sub.add_parser("counters", help="counter operations")
    csub = counters.add_subparsers(dest="action", required=True)
    rc = csub.add_parser(
        "recount", help="recompute a counter from its event log and compare with (or --repair) its rollup"
    )
    rc.add_argument("namespace")
    rc.add_argument("counter")
    rc.add_argument("--from", dest="start", help="ISO-8601 start (default: the namespace's retention)")
    rc.add_argument("--to", dest="end", help="ISO-8601 end (default: the counter's last_rollup_ts)")
    rc.add_argument("--repair", action="store_true", help="write the recounted value when it differs")
    rc.set_defaults(fn=cmd_counters)
    dls = sub.add_parser("deadletters", help="list, show and replay the dead-letter topic")
    dsub = dls.add_subparsers(dest="action", required=True)
    for name, text in (("list", "one line a dead letter, oldest first"), ("replay", "produce the originals again")):
        a = dsub.add_parser(name, help=text)
        a.add_argument("--reason", help="only this reason (UNKNOWN_NAMESPACE, INDEX_REJECTED, ...)")
        a.add_argument("--namespace", help="only the records of this namespace")
        if name == "replay":
            a.add_argument("--ref", action="append", help="only this partition:offset (as list prints it); repeatable")
            a.add_argument("--dry-run", action="store_true", help="say what would be replayed")
        a.set_defaults(fn=cmd_deadletters)
    show = dsub.add_parser("show", help="one dead letter whole, its original decoded when possible")
    show.add_argument("ref", help="partition:offset, as list prints it")
    show.set_defaults(fn=cmd_deadletters, reason=None, namespace=None)
    sub.add_parser("build", help="build the Java modules (jobs, services)").set_defaults(fn=cmd_build)
    docs = sub.add_parser("docs", help="build the reference site from docs/ (strict), or --serve it live")
    docs.add_argument("--serve", action="store_true", help="serve it with live reload instead")
    docs.add_argument("--port", type=int, default=8000)
    docs.set_defaults(fn=cmd_docs)
    test = sub.add_parser("test", help="all tests: unit, then integration against the running stack")
    g = test.add_mutually_exclusive_group()
    g.add_argument("--unit-only", action="store_true")
    g.add_argument("--integration-only", action="store_true")
    test.set_defaults(fn=cmd_test)
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--nodes" in argv:  # any command: the profile of that many Kafka brokers and Cassandra nodes
        i = argv.index("--nodes")
        if i + 1 >= len(argv) or argv[i + 1] not in ("1", "3"):
            p.error("--nodes takes 1 or 3")
        os.environ["TALLY_NODES"] = argv[i + 1]
        del argv[i : i + 2]
    if "--secure" in argv:  # any command: the secure profile (its own state in .tally/secure)
        argv.remove("--secure")
        os.environ["TALLY_SECURE"] = "1"
    args = p.parse_args(argv)
    try:
        settings = Settings.load()
        return args.fn(args, settings)
    except (StackError, RuntimeError, ValueError) as e:
        print(f"tally {args.cmd}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `./tally alerts | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 0
