"""`./tally bench <name>` and `./tally profile <component> <operation>` (the launcher hands these
commands to this module)."""

from __future__ import annotations

import argparse
import re
import sys

from tally.settings import Settings
from tally.stack import Stack, StackError

from . import tables


def say(msg: str) -> None:
    print(msg, flush=True)


def bench(args, settings: Settings) -> int:
    from . import benchmarks

    if args.name == "table":
        return tables.write(benchmarks.OUT, say)
    # as `./tally up` does: a benchmark measures the code of the tree, and its own tools (the
    # bench jar) must be of it too (a run used a jar older than its sources)
    from tally import build
    from tally.jobs import Jobs

    build.build_java(say)
    if args.report is not None and not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,63}", args.report):
        raise ValueError(f"--report {args.report!r}: lower-case letters, digits and '-' only")
    stack = Stack(settings, say)
    stack.up()
    Jobs(settings, say).ensure_deployed()
    # all: the benchmarks whose reports make the docs' tables, then the tables
    for name in tables.RUN_BY_ALL if args.name == "all" else (args.name,):
        say(f"== bench {name}")
        path = benchmarks.run(name, stack, say, report=args.report, **options(args, name))
        say(f"report: {path}")
    return tables.write(benchmarks.OUT, say) if args.name == "all" else 0


def options(args, name: str) -> dict:
    """The flags a benchmark takes (cost: --runs, --seconds, --only), those given."""
    if name != "cost":
        return {}
    given = {"runs": args.runs, "seconds": args.seconds, "only": args.only}
    return {k: v for k, v in given.items() if v is not None}


def profile(args, settings: Settings) -> int:
    from .profile import profile as run

    run(Stack(settings, say), say, args.component, args.operation, seconds=args.seconds, event=args.event)
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="tally")
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench", help="run a benchmark against the running stack (never fails on numbers)")
    b.add_argument(
        "name",
        choices=["all", "cost", "addcount", "gateway", "getcount", "reads", "registry", "timeseries"]
        + ["counters", "runq", "control", "lifecycle", "linger", "transport", "table"],
    )
    b.add_argument("--runs", type=int, help="cost: rounds of every operation (default 3)")
    b.add_argument("--seconds", type=float, help="cost: seconds of load an operation (default 20)")
    b.add_argument("--only", help="cost: the operations to measure, comma-separated (default all)")
    b.add_argument(
        "--report",
        help="the report's name under bench/out (default: the benchmark's; a partial cost run named apart"
        " leaves cost.json, which the tables read, whole)",
    )
    b.set_defaults(fn=bench)
    pr = sub.add_parser(
        "profile",
        help="async-profiler in a component's JVM under one operation of bench cost (CPU by thread, hot frames)",
    )
    pr.add_argument("component", help="a JVM component: gateway, kafka, cassandra, flink-taskmanager, ...")
    pr.add_argument(
        "operation",
        help="an operation of bench cost (addcount_eventual, getcount, timeseries_10, ...), idle, or"
        " timeseries_drain (200,000 events produced straight to Kafka, stored by the writer), or"
        " counters_drain (300,000 AddCount events over 100,000 counters straight to Kafka, folded by the rollup job)",
    )
    pr.add_argument("--seconds", type=float, default=20)
    pr.add_argument("--event", default="itimer", help="async-profiler's event: itimer (default), cpu, alloc, wall")
    pr.set_defaults(fn=profile)
    args = p.parse_args(argv)
    try:
        return args.fn(args, Settings.load())
    except (StackError, RuntimeError, ValueError) as e:
        print(f"tally {args.cmd}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


sys.exit(main(sys.argv[1:]))
