"""Reading what a test's requests put into Kafka, and proving when they put nothing."""
import time
import uuid

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext


class KafkaTail:
    """Remembers the end of each partition of some topics; later returns what came after."""

    def __init__(self, bootstrap: str, registry_url: str, topics: list[str]):
        self.bootstrap, self.topics = bootstrap, topics
        self.deser = AvroDeserializer(SchemaRegistryClient({"url": registry_url}))
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"tail-{uuid.uuid4()}",
                                  "enable.auto.commit": False, "log_level": 0})
        self.start = self.ends()

    def ends(self) -> dict[tuple[str, int], int]:
        out = {}
        for t in self.topics:
            md = self.consumer.list_topics(t, timeout=10).topics[t]
            for p in md.partitions:
                out[(t, p)] = self.consumer.get_watermark_offsets(TopicPartition(t, p), timeout=10)[1]
        return out

    def new_count(self) -> int:
        return sum(end - self.start[tp] for tp, end in self.ends().items())

    def records(self, expect: int, timeout: float = 30) -> list[tuple[str, str, dict]]:
        """(topic, key, decoded value) of the records after the start, waiting for `expect` of them."""
        deadline = time.monotonic() + timeout
        while self.new_count() < expect and time.monotonic() < deadline:
            time.sleep(0.2)
        ends = self.ends()
        self.consumer.assign([TopicPartition(t, p, off) for (t, p), off in self.start.items() if ends[(t, p)] > off])
        out, want = [], sum(ends[tp] - off for tp, off in self.start.items())
        while len(out) < want and time.monotonic() < deadline + 10:
            m = self.consumer.poll(1.0)
            if m is None or m.error():
                continue
            value = self.deser(m.value(), SerializationContext(m.topic(), MessageField.VALUE))
            out.append((m.topic(), m.key().decode(), value))
        return out

    def close(self):
        self.consumer.close()
