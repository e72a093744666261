"""./tally deadletters: list, show and replay what the jobs put on the dead-letter topic.

A dead letter (schemas/avro/DeadLetter.avsc) keeps the original record's bytes, where it came from
and why it was refused. Once the cause is fixed (the namespace created, a config widened), replay
produces the original key and value again to their topic, byte for byte; the jobs' writes are
idempotent upserts keyed by the event's ids, so replaying one twice stores it once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from .model import topic
from .settings import Settings
from .topic_reader import read_topic

DEAD_LETTER_TOPIC = topic("dead_letters")


@dataclass(frozen=True)
class DeadLetter:
    """One record of the dead-letter topic, decoded; `ref` is partition:offset on that topic."""

    partition: int
    offset: int
    reason: str
    message: str
    stage: str
    topic: str
    original_partition: int
    original_offset: int
    original_key: bytes | None
    original_value: bytes | None
    failed_at: datetime

    @property
    def ref(self) -> str:
        return f"{self.partition}:{self.offset}"

    @property
    def namespace(self) -> str | None:
        """The original record's namespace, from its key (namespace/id; namespaces hold no '/')."""
        if not self.original_key:
            return None
        key = self.original_key.decode("utf-8", errors="replace")
        return key.split("/", 1)[0] if "/" in key else None

    @classmethod
    def of(cls, partition: int, offset: int, v: dict) -> DeadLetter:
        failed = v["failed_at"]
        if not isinstance(failed, datetime):
            failed = datetime.fromtimestamp(failed / 1e6, UTC)
        return cls(
            partition,
            offset,
            v["reason"],
            v["message"],
            v["stage"],
            v["topic"],
            v["partition"],
            v["offset"],
            v["original_key"],
            v["original_value"],
            failed,
        )


def matches(d: DeadLetter, reason: str | None, namespace: str | None) -> bool:
    return (reason is None or d.reason == reason) and (namespace is None or d.namespace == namespace)


def line(d: DeadLetter) -> str:
    msg = d.message if len(d.message) <= 120 else d.message[:117] + "..."
    return (
        f"{d.ref:>10}  {d.failed_at.isoformat(timespec='seconds')}  {d.reason:<22} "
        f"{d.namespace or '-':<16} {d.topic}@{d.original_partition}:{d.original_offset}  {msg}"
    )


def parse_ref(ref: str) -> tuple[int, int]:
    try:
        p, o = ref.split(":")
        return int(p), int(o)
    except ValueError:
        raise ValueError(f"{ref!r} is not a dead letter's partition:offset (as `list` prints it)") from None


class DeadLetters:
    """Reads the dead-letter topic from its start to its end as it is now, and replays from it."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.bootstrap = settings.kafka_bootstrap()
        self.client = settings.kafka_client_config()
        self.registry = f"http://{settings.host}:{settings.port('TALLY_REGISTRY_PORT')}"

    def read(self) -> list[DeadLetter]:
        letters = [
            DeadLetter.of(r.partition, r.offset, r.value)
            for r in read_topic(self.settings, DEAD_LETTER_TOPIC, "tally-deadletters-cli")
        ]
        return sorted(letters, key=lambda d: (d.failed_at, d.partition, d.offset))

    def replay(self, letters: list[DeadLetter]) -> int:
        """Produces each original key and value to its topic again; the number produced."""
        from confluent_kafka import Producer

        producer = Producer({**self.client, "enable.idempotence": True, "acks": "all"})
        failed: list[str] = []

        def done(err, _msg):
            if err is not None:
                failed.append(str(err))

        n = 0
        for d in letters:
            if d.original_value is None:
                continue  # a tombstone: nothing to replay
            producer.produce(d.topic, key=d.original_key, value=d.original_value, on_delivery=done)
            n += 1
        if producer.flush(60) != 0 or failed:
            raise RuntimeError(f"replay: {len(failed) or 'some'} records were not acknowledged: {failed[:3]}")
        return n


def _plain(v: object) -> object:
    """A decoded Avro value as JSON can hold it (bytes as hex, times as ISO-8601)."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, datetime):
        return v.isoformat()
    return v


def show(d: DeadLetter, registry: str) -> str:
    """The dead letter with its original value decoded when the registry still knows its schema."""
    original: object
    try:
        from confluent_kafka.schema_registry import SchemaRegistryClient
        from confluent_kafka.schema_registry.avro import AvroDeserializer
        from confluent_kafka.serialization import MessageField, SerializationContext

        value = AvroDeserializer(SchemaRegistryClient({"url": registry}))(
            d.original_value, SerializationContext(d.topic, MessageField.VALUE)
        )
        original = _plain(value)
    except Exception as e:  # undecodable is a reason to be here
        original = {"undecodable": str(e), "hex": (d.original_value or b"").hex()[:512]}
    return json.dumps(
        {
            "ref": d.ref,
            "reason": d.reason,
            "message": d.message,
            "stage": d.stage,
            "failed_at": d.failed_at.isoformat(),
            "from": f"{d.topic}@{d.original_partition}:{d.original_offset}",
            "key": d.original_key.decode("utf-8", errors="replace") if d.original_key else None,
            "original": original,
        },
        indent=2,
        default=str,
    )
