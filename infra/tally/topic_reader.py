"""Reading one of Tally's topics from its start to its end as it is now, values decoded through
the registry: assigned partitions, no group offsets committed, so reading changes nothing for
anyone else (./tally deadletters, ./tally alerts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .settings import Settings


@dataclass
class Record:
    partition: int
    offset: int
    key: bytes | None
    value: dict[str, Any]


def read_topic(settings: Settings, topic: str, client_id: str) -> list[Record]:
    from confluent_kafka import Consumer, KafkaException, TopicPartition
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    registry = f"http://{settings.host}:{settings.port('TALLY_REGISTRY_PORT')}"
    decode = AvroDeserializer(SchemaRegistryClient({"url": registry}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    bootstrap = settings.kafka_bootstrap()
    # log_level 0: a broker that is down is said once below, not in a line per retry
    c = Consumer({**settings.kafka_client_config(), "group.id": client_id, "enable.auto.commit": False, "log_level": 0})
    try:
        try:
            meta = c.list_topics(topic, timeout=10).topics[topic]
        except KafkaException as e:
            raise RuntimeError(
                f"Kafka at {bootstrap} did not answer ({e.args[0].str()}): is the stack up? (./tally status)"
            ) from None
        if meta.error is not None:
            raise RuntimeError(f"{topic}: {meta.error.str()}")
        ends = {}
        for p in meta.partitions:
            lo, hi = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            if hi > lo:
                ends[p] = (lo, hi)
        c.assign([TopicPartition(topic, p, lo) for p, (lo, _) in ends.items()])
        out: list[Record] = []
        pending = {p: hi for p, (_, hi) in ends.items()}
        while pending:
            m = c.poll(5)
            if m is None:
                raise RuntimeError(f"{topic} stopped answering before its end")
            if m.error():
                raise RuntimeError(f"reading {topic}: {m.error()}")
            if m.value() is not None:
                out.append(Record(m.partition(), m.offset(), m.key(), decode(m.value(), ctx)))
            if m.offset() + 1 >= pending.get(m.partition(), 0):
                pending.pop(m.partition(), None)
        return out
    finally:
        c.close()
