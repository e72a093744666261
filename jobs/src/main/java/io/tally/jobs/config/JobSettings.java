package io.tally.jobs.config;

import io.tally.common.CassandraClientSecurity;
import io.tally.common.ElasticsearchClientSecurity;
import io.tally.common.KafkaClientSecurity;
import io.tally.jobs.config.JobSetting.Kind;
import java.util.ArrayList;
import java.util.List;

/** The arguments Tally's jobs share, declared once; each job lists the groups it uses. */
public final class JobSettings {
    public static final JobSetting KAFKA_BOOTSTRAP =
            new JobSetting("kafka.bootstrap", Kind.HOST_PORTS, "127.0.0.1:9092", "Kafka bootstrap servers");
    public static final JobSetting REGISTRY_URL =
            new JobSetting("registry.url", Kind.URL, "http://127.0.0.1:8085", "the schema registry");
    public static final JobSetting CHECKPOINT_INTERVAL_MS =
            new JobSetting("checkpoint.interval.ms", Kind.MILLIS, "15000", "exactly-once checkpoint interval");
    /**
     * Where a job keeps its state. hashmap: on the TaskManager's heap, snapshotted whole at each
     * checkpoint; Tally's states are small or short-lived (a counter's rollup, dedup ids until the
     * rollup passes them, a container's windows), and RocksDB's memtable flushes and compactions
     * at every checkpoint were over half of the TaskManager's CPU. rocksdb: state larger than the
     * heap (millions of counters), incremental checkpoints. A retained checkpoint restores only
     * into the backend that took it; a savepoint (canonical format) into either.
     */
    public static final JobSetting STATE_BACKEND = new JobSetting(
            "state.backend",
            Kind.STATE_BACKEND,
            "hashmap",
            "hashmap (state on the heap) or rocksdb (state larger than the heap, incremental checkpoints)");
    /** The consumer group of a job's source, by default the job's name. */
    public static JobSetting groupId(String job) {
        return new JobSetting(
                "group.id",
                Kind.TEXT,
                job,
                "consumer group of the job's source (offsets live in its checkpoints; the group shows its progress)");
    }

    /**
     * How long the broker may hold a fetch of the job's source for more data. With the consumer's
     * defaults (answer as soon as 1 byte is there) a busy topic is fetched once per produced batch:
     * hundreds of fetch round trips a second per job, measured as the TaskManager's largest CPU
     * share under 2,000 AddCount/s. The wait adds at most this much latency when the topic is quiet.
     */
    public static JobSetting fetchMaxWaitMs(String dflt) {
        return new JobSetting(
                "kafka.fetch.max.wait.ms",
                Kind.MILLIS,
                dflt,
                "longest the broker holds a fetch of the source waiting for kafka.fetch.min.bytes (added latency when quiet)");
    }

    public static final JobSetting FETCH_MIN_BYTES = new JobSetting(
            "kafka.fetch.min.bytes",
            Kind.COUNT,
            "65536",
            "bytes the broker gathers before it answers a fetch of the source (or kafka.fetch.max.wait.ms passes)");

    /**
     * The jobs' producers (the counter view's rollups and live totals, dead letters) batch for this
     * long: the client the connector ships (3.9) sends each record at once (linger 0), so every
     * rollup was a produce request of its own to the broker and a fetch answer to every gateway.
     */
    public static final JobSetting PRODUCER_LINGER_MS = new JobSetting(
            "kafka.producer.linger.ms",
            Kind.MILLIS,
            "5",
            "how long the job's Kafka producers wait to fill a batch (Kafka 4's default; added latency of the view)");

    /** The fetch wait as most jobs declare it (its name is what a job's value is looked up by). */
    public static final JobSetting FETCH_MAX_WAIT_MS = fetchMaxWaitMs("50");

    /** Kafka, the registry and checkpoints: what every job has; the source's fetch wait defaults to 50 ms. */
    public static List<JobSetting> kafka(String job) {
        return kafka(job, FETCH_MAX_WAIT_MS.defaultValue());
    }

    /**
     * How the job's Kafka clients authenticate and check the broker: the same names and defaults as
     * the gateway's and registry's ({@link KafkaClientSecurity}), except the password, which a job
     * reads only from a file on the TaskManager's host (a job's arguments show in Flink's REST API
     * and dashboard).
     */
    public static final List<JobSetting> KAFKA_SECURITY = List.of(
            fromService(KafkaClientSecurity.PROTOCOL, Kind.TEXT),
            fromService(KafkaClientSecurity.MECHANISM, Kind.TEXT),
            fromService(KafkaClientSecurity.USERNAME, Kind.OPTIONAL),
            fromService(KafkaClientSecurity.PASSWORD_FILE, Kind.OPTIONAL),
            fromService(KafkaClientSecurity.TRUSTSTORE, Kind.OPTIONAL),
            fromService(KafkaClientSecurity.TRUSTSTORE_PASSWORD, Kind.OPTIONAL),
            fromService(KafkaClientSecurity.VERIFY_HOSTNAME, Kind.TEXT));

    private static JobSetting fromService(io.tally.common.ServiceSettings.Field f, Kind kind) {
        return new JobSetting(f.name(), kind, f.defaultValue(), f.description());
    }

    /** The same with another default fetch wait (a job whose answers are windows of seconds can batch more). */
    public static List<JobSetting> kafka(String job, String fetchMaxWaitMs) {
        return of(
                List.of(
                        KAFKA_BOOTSTRAP,
                        REGISTRY_URL,
                        groupId(job),
                        CHECKPOINT_INTERVAL_MS,
                        STATE_BACKEND,
                        fetchMaxWaitMs(fetchMaxWaitMs),
                        FETCH_MIN_BYTES,
                        PRODUCER_LINGER_MS),
                KAFKA_SECURITY);
    }

    public static final JobSetting CASSANDRA_HOST = new JobSetting(
            "cassandra.host", Kind.TEXT, "127.0.0.1", "Cassandra contact points (hosts, comma-separated)");
    public static final JobSetting CASSANDRA_PORT =
            new JobSetting("cassandra.port", Kind.PORT, "9042", "Cassandra's native port");
    public static final JobSetting CASSANDRA_DATACENTER = new JobSetting(
            "cassandra.datacenter", Kind.TEXT, "datacenter1", "the local datacenter (queries and replication)");
    public static final JobSetting CASSANDRA_CONSISTENCY = new JobSetting(
            "cassandra.consistency",
            Kind.TEXT,
            "ONE",
            "consistency level of every read and write (LOCAL_QUORUM on a cluster of 3)");
    public static final JobSetting CASSANDRA_REPLICATION_STRATEGY = new JobSetting(
            "cassandra.replication.strategy",
            Kind.TEXT,
            "SimpleStrategy",
            "how new keyspaces are replicated: SimpleStrategy or NetworkTopologyStrategy (in the local datacenter)");
    public static final JobSetting CASSANDRA_REPLICATION_FACTOR =
            new JobSetting("cassandra.replication.factor", Kind.COUNT, "1", "replicas of each row of new keyspaces");
    public static final JobSetting CASSANDRA_BATCH_PARTITIONS = new JobSetting(
            "cassandra.batch.partitions",
            Kind.COUNT,
            "10",
            "partitions an unlogged batch of one replica set spans at most (at most the cluster's"
                    + " unlogged_batch_across_partitions_warn_threshold, or it logs a warning a batch)");
    public static final JobSetting CASSANDRA_BATCH_BYTES = new JobSetting(
            "cassandra.batch.bytes",
            Kind.COUNT,
            "5120",
            "bytes of such a batch at most (at most the cluster's batch_size_warn_threshold)");
    public static final JobSetting CASSANDRA_BATCH_LINGER_MS = new JobSetting(
            "cassandra.batch.linger.ms",
            Kind.MILLIS,
            "5",
            "how long a row waits for others to share its batch (added latency of a stored event and a rollup)");
    public static final List<JobSetting> CASSANDRA = List.of(
            CASSANDRA_HOST,
            CASSANDRA_PORT,
            CASSANDRA_DATACENTER,
            CASSANDRA_CONSISTENCY,
            CASSANDRA_REPLICATION_STRATEGY,
            CASSANDRA_REPLICATION_FACTOR,
            CASSANDRA_BATCH_PARTITIONS,
            CASSANDRA_BATCH_BYTES,
            CASSANDRA_BATCH_LINGER_MS,
            // the login and TLS: the password only as a file on the TaskManagers' hosts
            fromService(CassandraClientSecurity.USERNAME, Kind.OPTIONAL),
            fromService(CassandraClientSecurity.PASSWORD_FILE, Kind.OPTIONAL),
            fromService(CassandraClientSecurity.SSL, Kind.TEXT),
            fromService(CassandraClientSecurity.TRUSTSTORE, Kind.OPTIONAL),
            fromService(CassandraClientSecurity.TRUSTSTORE_PASSWORD, Kind.OPTIONAL),
            fromService(CassandraClientSecurity.VERIFY_HOSTNAME, Kind.TEXT));

    public static final JobSetting ELASTICSEARCH_URL = new JobSetting(
            "elasticsearch.url",
            Kind.URL,
            "http://127.0.0.1:9200",
            "Elasticsearch (documents of indexed namespaces, index templates); https for TLS");
    /** Where Elasticsearch is and how the job logs in: the password only as a file on the TaskManagers' hosts. */
    public static final List<JobSetting> ELASTICSEARCH = List.of(
            ELASTICSEARCH_URL,
            fromService(ElasticsearchClientSecurity.USERNAME, Kind.OPTIONAL),
            fromService(ElasticsearchClientSecurity.PASSWORD_FILE, Kind.OPTIONAL),
            fromService(ElasticsearchClientSecurity.TRUSTSTORE, Kind.OPTIONAL),
            fromService(ElasticsearchClientSecurity.TRUSTSTORE_PASSWORD, Kind.OPTIONAL));

    public static final JobSetting UNKNOWN_NAMESPACE_GRACE_MS = new JobSetting(
            "unknown.namespace.grace.ms",
            Kind.COUNT,
            "10000",
            "how long a record of a namespace not heard of yet waits for it before it is dead-lettered UNKNOWN_NAMESPACE");

    private JobSettings() {}

    @SafeVarargs
    public static List<JobSetting> of(List<JobSetting>... groups) {
        List<JobSetting> all = new ArrayList<>();
        for (List<JobSetting> g : groups) {
            all.addAll(g);
        }
        return List.copyOf(all);
    }
}
