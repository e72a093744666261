package io.tally.jobs.kafka;

import io.tally.serde.AvroSerde;
import io.tally.serde.SchemaRegistryClient;
import io.tally.serde.TallySchemas;
import java.nio.ByteBuffer;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.util.function.SerializableSupplier;
import org.apache.kafka.clients.producer.ProducerRecord;

/** DeadLetterRecords as Avro DeadLetter values on tally.deadletter, keyed by the original key. */
public class DeadLetterSerializer implements KafkaRecordSerializationSchema<DeadLetterRecord> {
    public static final String TOPIC = "tally.deadletter";
    private final SerializableSupplier<SchemaRegistryClient> registry;
    private transient AvroSerde serde;

    public DeadLetterSerializer(SerializableSupplier<SchemaRegistryClient> registry) {
        this.registry = registry;
    }

    @Override
    public void open(SerializationSchema.InitializationContext context, KafkaSinkContext sinkContext) {
        serde = new AvroSerde(registry.get());
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(DeadLetterRecord d, KafkaSinkContext context, Long timestamp) {
        return new ProducerRecord<>(TOPIC, d.original.key, serde.serialize(TOPIC, toAvro(d)));
    }

    public static GenericRecord toAvro(DeadLetterRecord d) {
        GenericRecord r = new GenericData.Record(TallySchemas.DEAD_LETTER);
        r.put("original_key", d.original.key == null ? null : ByteBuffer.wrap(d.original.key));
        r.put("original_value", d.original.value == null ? null : ByteBuffer.wrap(d.original.value));
        r.put("topic", d.original.topic);
        r.put("partition", d.original.partition);
        r.put("offset", d.original.offset);
        r.put("reason", d.reason);
        r.put("message", d.message == null ? "" : d.message);
        r.put("stage", d.stage);
        r.put("failed_at", System.currentTimeMillis() * 1000);
        return r;
    }
}
