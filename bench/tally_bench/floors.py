"""HTTP servers that do nothing but answer (or write each body to Kafka and answer), started in a
cgroup of their own: the floors `bench transport` puts the gateway against, and the server of
`bench cost`'s null request (a load that asks the stack nothing)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tally.component_cgroups import JOIN
from tally.components.base import JAVA
from tally.components.java_service import shaded_jar
from tally.stack import Stack

from .tools import bench_jar, free_port

FLOOR_TOPIC = "bench.ceiling"  # ProducerPerformance's topic: three partitions, nothing reads it
#: the gateway's producer settings (GatewayConfig's linger default; the stack's compression)
LINGER_MS = os.environ.get("TALLY_GATEWAY_PRODUCER_LINGER_MS", "10")


#: the floor on Vert.x 5 and Netty 4.2: a module and jar of its own (Vert.x 4 and 5 cannot share a classpath)
VERTX5 = ("bench/vertx5-floor", "tally-bench-vertx5-floor", "io.tally.bench.http5.Vertx5FloorServer")


def start_floor(kind: str, cgroup: Path, stack: Stack) -> tuple[subprocess.Popen, str]:
    """An HttpFloorServer of `kind` (netty, vertx, vertx-kafka; vertx5: Vertx5FloorServer) in
    `cgroup`, listening; (its process, its URL)."""
    port = free_port()
    if kind == "vertx5":
        jar, main = shaded_jar(VERTX5[0], VERTX5[1]), VERTX5[2]
    else:
        jar, main = bench_jar(), "io.tally.bench.http.HttpFloorServer"
    cmd = [JAVA, "-Xmx256m", "-cp", str(jar), main, kind, str(port)]
    if kind == "vertx-kafka":
        compression = stack.s.get("TALLY_GATEWAY_PRODUCER_COMPRESSION")
        cmd += [stack.component("kafka").bootstrap, FLOOR_TOPIC, LINGER_MS, compression]
    p = subprocess.Popen(
        ["sh", "-c", JOIN, str(cgroup / "cgroup.procs"), *cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = p.stdout.readline()
    if "listening" not in line:
        p.kill()
        raise RuntimeError(f"HttpFloorServer {kind} did not start: {line}{p.stderr.read()[-2000:]}")
    return p, f"http://127.0.0.1:{port}"


def stop(p: subprocess.Popen) -> None:
    """Ends a floor server this benchmark started (by its process, never by name)."""
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
