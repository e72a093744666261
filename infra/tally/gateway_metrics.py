"""Figures read from the gateway's Prometheus endpoint, for the tests and benchmarks that ask."""

from __future__ import annotations

import requests


def read_cache_counts(gw: str) -> dict[str, float]:
    """The gateway's tally_gateway_read_cache_total by result (hit, miss) so far."""
    out = {"hit": 0.0, "miss": 0.0}
    for line in requests.get(f"{gw}/metrics", timeout=10).text.splitlines():
        if line.startswith("tally_gateway_read_cache_total{"):
            out[line.split('result="')[1].split('"')[0]] = float(line.rsplit(" ", 1)[1])
    return out
