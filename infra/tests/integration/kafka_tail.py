"""Reading what a test's requests put into Kafka, and proving when they put nothing."""

import time
import uuid

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext


class KafkaTail:
    """Remembers the end of each partition of some topics; later returns what came after."""

    def __init__(
        self, bootstrap: str, registry_url: str, topics: list[str], ignore_keys: tuple[str, ...] = ("sched.",)
    ):
        """ignore_keys: key prefixes of background producers (the runq exporter writes
        sched.* events into the same topics all the time)."""
        self.bootstrap, self.topics, self.ignore_keys = bootstrap, topics, ignore_keys
        self.deser = AvroDeserializer(SchemaRegistryClient({"url": registry_url}))
        self.consumer = self._consumer()
        self.reset()

    def _consumer(self) -> Consumer:
        return Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"tail-{uuid.uuid4()}",
                "enable.auto.commit": False,
                "log_level": 0,
            }
        )

    def _reconnect(self) -> None:
        """A new client at the same positions: after a broker restart librdkafka can keep
        failing on a connection it holds, while a fresh client connects at once."""
        self.consumer.close()
        self.consumer = self._consumer()
        if hasattr(self, "position"):
            self.consumer.assign([TopicPartition(t, p, off) for (t, p), off in self.position.items()])

    def reset(self) -> None:
        """From now on: forgets what came before."""
        self.start = self.ends()
        self.position: dict[tuple[str, int], int] = dict(self.start)
        self.seen: list[tuple[str, str, dict]] = []
        self.consumer.assign([TopicPartition(t, p, off) for (t, p), off in self.start.items()])

    def ends(self) -> dict[tuple[str, int], int]:
        """The end offsets; retried for a while, since a test may have just restarted the broker."""
        from confluent_kafka import KafkaException

        deadline = time.monotonic() + 60
        failures = 0
        while True:
            try:
                out = {}
                for t in self.topics:
                    md = self.consumer.list_topics(t, timeout=10).topics[t]
                    for p in md.partitions:
                        out[(t, p)] = self.consumer.get_watermark_offsets(TopicPartition(t, p), timeout=10)[1]
                return out
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                failures += 1
                if failures % 3 == 0:
                    self._reconnect()
                time.sleep(1)

    def _drain(self, until: dict[tuple[str, int], int], deadline: float) -> None:
        """Reads every record before `until`, keeping those with a value (heartbeats have none)."""
        while time.monotonic() < deadline:
            if all(self.position.get(tp, off) >= until[tp] for tp, off in self.start.items()):
                return
            m = self.consumer.poll(0.5)
            if m is None or m.error():
                continue
            self.position[(m.topic(), m.partition())] = m.offset() + 1
            if m.value() is not None and not (m.key() or b"").decode(errors="replace").startswith(self.ignore_keys):
                value = self.deser(m.value(), SerializationContext(m.topic(), MessageField.VALUE))
                self.seen.append((m.topic(), m.key().decode(), value))

    def new_count(self) -> int:
        """How many records (heartbeats aside) came after the start."""
        self._drain(self.ends(), time.monotonic() + 30)
        return len(self.seen)

    def records(self, expect: int, timeout: float = 30) -> list[tuple[str, str, dict]]:
        """(topic, key, decoded value) of the records after the start, waiting for `expect` of them."""
        self.records_until(lambda seen: len(seen) >= expect, timeout)
        self._drain(self.ends(), time.monotonic() + 10)
        return list(self.seen)

    def records_until(self, done, timeout: float = 60) -> list[tuple[str, str, dict]]:
        """Like records(), but waits until done(records) holds: a count alone can be met by
        records of other writers (another test's dead letters) before the awaited ones arrive."""
        deadline = time.monotonic() + timeout
        while not done(self.seen) and time.monotonic() < deadline:
            self._drain(self.ends(), min(deadline, time.monotonic() + 2))
            if not done(self.seen):
                time.sleep(0.2)
        return list(self.seen)

    def close(self):
        self.consumer.close()
