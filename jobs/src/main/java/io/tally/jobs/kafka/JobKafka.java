package io.tally.jobs.kafka;

import io.tally.serde.RestSchemaRegistryClient;
import io.tally.serde.SchemaRegistryClient;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.CheckpointingMode;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.function.SerializableSupplier;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;

/**
 * What every Tally job's main() sets up the same way from its arguments (--kafka.bootstrap,
 * --registry.url, --group.id, --checkpoint.interval.ms): the exactly-once environment, a source
 * of raw records, the schema registry and the dead-letter sink.
 */
public final class JobKafka {
    private final ParameterTool p;
    public final String bootstrap;

    public JobKafka(ParameterTool p) {
        this.p = p;
        this.bootstrap = p.get("kafka.bootstrap", "127.0.0.1:9092");
    }

    public StreamExecutionEnvironment environment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(p.getLong("checkpoint.interval.ms", 5000), CheckpointingMode.EXACTLY_ONCE);
        return env;
    }

    public SerializableSupplier<SchemaRegistryClient> registry() {
        String url = p.get("registry.url", "http://127.0.0.1:8085");
        return () -> new RestSchemaRegistryClient(url);
    }

    /** Raw records of the topics, from the group's committed offsets (or `reset` without them). */
    public KafkaSource<RawRecord> source(String defaultGroup, OffsetResetStrategy reset, String... topics) {
        return KafkaSource.<RawRecord>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(topics)
                .setGroupId(p.get("group.id", defaultGroup))
                .setStartingOffsets(OffsetsInitializer.committedOffsets(reset))
                .setDeserializer(new RawRecordDeserializer())
                .build();
    }

    public KafkaSink<DeadLetterRecord> deadLetters() {
        return KafkaSink.<DeadLetterRecord>builder().setBootstrapServers(bootstrap)
                .setRecordSerializer(new DeadLetterSerializer(registry()))
                .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build();
    }
}
