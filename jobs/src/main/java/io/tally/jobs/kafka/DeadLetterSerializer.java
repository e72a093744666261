package io.tally.jobs.kafka;

import io.tally.model.Topics;
import io.tally.serde.AvroSerde;
import io.tally.serde.SchemaRegistryClient;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.util.function.SerializableSupplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import tally.v1.DeadLetter;

/** DeadLetterRecords as Avro DeadLetter values on tally.deadletter, keyed by the original key. */
public class DeadLetterSerializer implements KafkaRecordSerializationSchema<DeadLetterRecord> {
    public static final String TOPIC = Topics.DEAD_LETTER;
    private final SerializableSupplier<SchemaRegistryClient> registry;
    private transient AvroSerde serde;

    public DeadLetterSerializer(SerializableSupplier<SchemaRegistryClient> registry) {
        this.registry = registry;
    }

    @Override
    public void open(SerializationSchema.InitializationContext context, KafkaSinkContext sinkContext) {
        serde = new AvroSerde(registry.get(), false); // registered by the registry's bootstrap: a lookup
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(DeadLetterRecord d, KafkaSinkContext context, Long timestamp) {
        return new ProducerRecord<>(TOPIC, d.original.key, serde.serialize(TOPIC, toAvro(d)));
    }

    public static DeadLetter toAvro(DeadLetterRecord d) {
        return DeadLetter.newBuilder()
                .setOriginalKey(d.original.key == null ? null : ByteBuffer.wrap(d.original.key))
                .setOriginalValue(d.original.value == null ? null : ByteBuffer.wrap(d.original.value))
                .setTopic(d.original.topic)
                .setPartition(d.original.partition)
                .setOffset(d.original.offset)
                .setReason(d.reason.name())
                .setMessage(d.message == null ? "" : d.message)
                .setStage(d.stage)
                .setFailedAt(Instant.now().truncatedTo(ChronoUnit.MICROS))
                .build();
    }
}
