"""Tally's benchmark harness (`./tally bench`, `./tally profile`): each benchmark drives the running
stack as a user would (vegeta, Kafka's own perf tools), reads each component's CPU from its cgroup
and writes a JSON report and PNG plots under bench/out/; `tables` makes docs/benchmarks.md's tables
from those reports. It imports the launcher (infra/tally) for the stack and its settings; the
launcher never imports it."""
