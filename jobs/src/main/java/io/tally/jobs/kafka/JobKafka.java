package io.tally.jobs.kafka;

import io.tally.common.KafkaClientSecurity;
import io.tally.jobs.config.JobArgs;
import io.tally.jobs.config.JobSettings;
import io.tally.serde.RestSchemaRegistryClient;
import io.tally.serde.SchemaRegistryClient;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.CheckpointingMode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.function.SerializableFunction;
import org.apache.flink.util.function.SerializableSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;

/**
 * What every Tally job's main() sets up the same way from its arguments
 * ({@link JobSettings#kafka}): the exactly-once environment, a source of raw records, the schema
 * registry and the dead-letter sink.
 */
public final class JobKafka {
    private final JobArgs args;
    private final String group;
    public final String bootstrap;
    /** The security properties of every Kafka client of the job (no password of its own: read from a file). */
    private final Map<String, String> security;
    /** Key groups of every job (see {@link #environment}). */
    public static final int MAX_PARALLELISM = 128;

    /** @param job the job's name, the default of its group.id */
    public JobKafka(JobArgs args, String job) {
        this.args = args;
        this.bootstrap = args.text(JobSettings.KAFKA_BOOTSTRAP);
        this.group = args.text(JobSettings.groupId(job));
        this.security = clientSecurity(args);
    }

    /**
     * The clients' security from the job's arguments: the password a reference to its file
     * ({@link PasswordFileConfigProvider}), read by each client where it runs.
     */
    static Map<String, String> clientSecurity(JobArgs args) {
        KafkaClientSecurity security = KafkaClientSecurity.from(args::byName); // checks the file is readable here
        if (!security.sasl()) {
            return security.properties();
        }
        Map<String, String> p = new java.util.LinkedHashMap<>(security.properties(
                PasswordFileConfigProvider.reference(args.byName(KafkaClientSecurity.PASSWORD_FILE.name()))));
        p.putAll(PasswordFileConfigProvider.declared());
        return p;
    }

    /** What every Kafka client of the job sets besides its own settings: how it authenticates and checks the broker. */
    public Properties clientConfig() {
        Properties p = new Properties();
        p.putAll(security);
        return p;
    }

    public StreamExecutionEnvironment environment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        // Key groups: the most subtasks a keyed operator can ever be rescaled to. Fixed, since a
        // savepoint restores only at the max parallelism it was taken with; 128 is what Flink
        // derived for the jobs' state at parallelism 1, so earlier savepoints still restore.
        env.setMaxParallelism(MAX_PARALLELISM);
        env.enableCheckpointing(args.number(JobSettings.CHECKPOINT_INTERVAL_MS), CheckpointingMode.EXACTLY_ONCE);
        // kept when the job is cancelled or its cluster goes away, so a new deployment restores the
        // job's state from it (counts, dedup ids, pending events) instead of starting empty
        env.getCheckpointConfig()
                .setExternalizedCheckpointRetention(ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        Configuration backend = new Configuration();
        backend.set(StateBackendOptions.STATE_BACKEND, args.text(JobSettings.STATE_BACKEND));
        env.configure(backend);
        return env;
    }

    public SerializableSupplier<SchemaRegistryClient> registry() {
        String url = args.text(JobSettings.REGISTRY_URL);
        return () -> new RestSchemaRegistryClient(url);
    }

    /**
     * The topics' records as the job's source stream, with at most one source subtask per
     * partition: a subtask that owns no partition would have no event time to give and hold every
     * downstream watermark (the rollups) back.
     */
    public DataStream<RawRecord> stream(
            StreamExecutionEnvironment env,
            OffsetResetStrategy reset,
            WatermarkStrategy<RawRecord> watermarks,
            String name,
            String uid,
            String... topics)
            throws Exception {
        DataStreamSource<RawRecord> stream = env.fromSource(source(reset, topics), watermarks, name);
        stream.uid(uid);
        int partitions = Integer.MAX_VALUE;
        for (String topic : topics) {
            partitions = Math.min(partitions, partitions(topic));
        }
        if (env.getParallelism() > partitions) {
            stream.setParallelism(partitions);
        }
        return stream;
    }

    /** How many partitions a topic has. */
    public int partitions(String topic) throws Exception {
        Properties p = clientConfig();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            return admin.describeTopics(List.of(topic))
                    .allTopicNames()
                    .get()
                    .get(topic)
                    .partitions()
                    .size();
        }
    }

    /** Raw records of the topics, from the group's committed offsets (or `reset` without them). */
    public KafkaSource<RawRecord> source(OffsetResetStrategy reset, String... topics) {
        return KafkaSource.<RawRecord>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(topics)
                .setGroupId(group)
                .setStartingOffsets(OffsetsInitializer.committedOffsets(reset))
                .setDeserializer(new RawRecordDeserializer())
                .setProperties(clientConfig())
                .setProperty("fetch.min.bytes", String.valueOf(args.number(JobSettings.FETCH_MIN_BYTES)))
                .setProperty("fetch.max.wait.ms", String.valueOf(args.number(JobSettings.FETCH_MAX_WAIT_MS)))
                .build();
    }

    public KafkaSink<DeadLetterRecord> deadLetters() {
        return KafkaSink.<DeadLetterRecord>builder()
                .setBootstrapServers(bootstrap)
                .setRecordSerializer(new DeadLetterSerializer(registry()))
                .setKafkaProducerConfig(producerConfig())
                .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
                .build();
    }

    /** A sink of Avro values with keys on one of Tally's topics (at least once; the value's schema looked up). */
    public <T> KafkaSink<T> avro(String topic, SerializableFunction<T, AvroRecordSerializer.Keyed> toAvro) {
        return KafkaSink.<T>builder()
                .setBootstrapServers(bootstrap)
                .setRecordSerializer(new AvroRecordSerializer<>(topic, registry(), toAvro))
                .setKafkaProducerConfig(producerConfig())
                .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
                .build();
    }

    /** What every producer of the job sets (the connector's sinks take it as their producer config). */
    public Properties producerConfig() {
        Properties p = clientConfig();
        p.setProperty("linger.ms", String.valueOf(args.number(JobSettings.PRODUCER_LINGER_MS)));
        return p;
    }
}
