package io.tally.jobs.kafka;

import io.tally.serde.AvroSerde;
import io.tally.serde.SchemaRegistryClient;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.util.function.SerializableFunction;
import org.apache.flink.util.function.SerializableSupplier;
import org.apache.kafka.clients.producer.ProducerRecord;

/** Elements as Avro values (Confluent wire format, the shared serde) on one topic, with a key. */
public class AvroRecordSerializer<T> implements KafkaRecordSerializationSchema<T> {
    /** What an element becomes: its key and its Avro value. */
    public record Keyed(String key, GenericRecord value) implements Serializable {}

    private final String topic;
    private final SerializableSupplier<SchemaRegistryClient> registry;
    private final SerializableFunction<T, Keyed> toAvro;
    private transient AvroSerde serde;

    public AvroRecordSerializer(
            String topic, SerializableSupplier<SchemaRegistryClient> registry, SerializableFunction<T, Keyed> toAvro) {
        this.topic = topic;
        this.registry = registry;
        this.toAvro = toAvro;
    }

    @Override
    public void open(SerializationSchema.InitializationContext context, KafkaSinkContext sinkContext) {
        serde = new AvroSerde(registry.get(), false); // registered by the registry's bootstrap: a lookup
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(T element, KafkaSinkContext context, Long timestamp) {
        Keyed k;
        try {
            k = toAvro.apply(element);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return new ProducerRecord<>(topic, k.key().getBytes(StandardCharsets.UTF_8), serde.serialize(topic, k.value()));
    }
}
