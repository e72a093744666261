"""Tally's contracts as the launcher needs them, read from the model module's model/topics.json
(written from io.tally.model.Topics and kept equal to it by TopicsTest): no second list here."""

from __future__ import annotations

import json
from functools import lru_cache

from .settings import REPO

TOPICS_FILE = REPO / "model" / "topics.json"


@lru_cache(maxsize=1)
def _model() -> dict:
    return json.loads(TOPICS_FILE.read_text())


def topic(topic_id: str) -> str:
    """A topic's name by its id in model/topics.json (e.g. "counter_events")."""
    for t in _model()["topics"]:
        if t["id"] == topic_id:
            return t["name"]
    raise KeyError(f"no topic {topic_id!r} in {TOPICS_FILE}")


def tally_topics(partitions: int) -> dict[str, tuple[int, dict[str, str]]]:
    """Every topic with its partition count and creation configs."""
    return {t["name"]: (partitions if t["partitioned"] else 1, dict(t["config"])) for t in _model()["topics"]}


def sched_namespace(role: str) -> str:
    return _model()["sched_namespaces"][role]
