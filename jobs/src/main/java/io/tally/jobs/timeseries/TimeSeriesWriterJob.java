package io.tally.jobs.timeseries;

import io.tally.jobs.cassandra.CassandraEndpoint;
import io.tally.jobs.cassandra.CassandraEventSink;
import io.tally.jobs.cassandra.EventRow;
import io.tally.jobs.config.JobArgs;
import io.tally.jobs.config.JobSetting;
import io.tally.jobs.config.JobSettings;
import io.tally.jobs.config.ObjectReuse;
import io.tally.jobs.control.ControlPlane;
import io.tally.jobs.elasticsearch.ElasticsearchBulkSink;
import io.tally.jobs.elasticsearch.ElasticsearchEndpoint;
import io.tally.jobs.elasticsearch.IndexDoc;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.JobKafka;
import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.provision.IndexTemplateGuard;
import io.tally.jobs.provision.Provisioning;
import io.tally.jobs.provision.StoreNamespaceStorage;
import io.tally.model.Topics;
import io.tally.namespace.NamespaceChange;
import io.tally.serde.SchemaRegistryClient;
import java.util.List;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * Stores every TimeSeriesEvent of tally.timeseries.events in its namespace's Cassandra slice
 * table (time and event buckets from {@link io.tally.namespace.TimeSlicePlanner}); what cannot
 * be stored goes to tally.deadletter with a reason. The source stream and the sinks are
 * arguments of {@link #build}, so tests run the same pipeline on a MiniCluster with test ones.
 *
 * Each stored event of an indexed namespace is also indexed into Elasticsearch (document id =
 * idempotency key, one index per slice behind the namespace's alias).
 *
 * Namespaces come from the control plane ({@link ControlPlane}, broadcast state). The
 * {@link Provisioning} branch provisions a namespace when it is created or changed and retires it
 * when deleted, and runs the slice lifecycle every lifecycle.interval.ms: slices created ahead,
 * closed after close_after, dropped (table and index) after delete_after.
 *
 * <p>Arguments: {@link #SETTINGS} ({@code --help} lists them).
 */
public final class TimeSeriesWriterJob {
    public static final String NAME = "tally-timeseries-writer";
    public static final String TOPIC = Topics.TIMESERIES_EVENTS;

    /** A bulk request closes at this size: what a bulk costs Elasticsearch is per request and per byte. */
    public static final JobSetting ELASTICSEARCH_BULK_MB = new JobSetting(
            "elasticsearch.bulk.mb",
            JobSetting.Kind.SIZE,
            "5",
            "MiB of documents a bulk request carries at most (Elasticsearch advises bulks of a few MB)");

    public static final JobSetting ELASTICSEARCH_BULK_ACTIONS = new JobSetting(
            "elasticsearch.bulk.actions",
            JobSetting.Kind.SIZE,
            "20000",
            "documents a bulk request carries at most (a bound for many tiny documents; the size closes it first)");
    public static final JobSetting ELASTICSEARCH_BULK_INTERVAL_MS = new JobSetting(
            "elasticsearch.bulk.interval.ms",
            JobSetting.Kind.MILLIS,
            "1000",
            "how long a document waits for its bulk at most (added to the time until it is searchable)");
    public static final JobSetting LIFECYCLE_INTERVAL_MS = new JobSetting(
            "lifecycle.interval.ms",
            JobSetting.Kind.MILLIS,
            "60000",
            "how often the slice lifecycle runs (slices ahead, close, drop by retention)");
    /** Every argument the job takes. */
    public static final List<JobSetting> SETTINGS = JobSettings.of(
            // a quiet topic (the stack's own samples at rest) is fetched 4 times a second, not 20
            JobSettings.kafka(NAME, "250"),
            JobSettings.CASSANDRA,
            JobSettings.ELASTICSEARCH,
            List.of(
                    ELASTICSEARCH_BULK_MB,
                    ELASTICSEARCH_BULK_ACTIONS,
                    ELASTICSEARCH_BULK_INTERVAL_MS,
                    LIFECYCLE_INTERVAL_MS,
                    JobSettings.UNKNOWN_NAMESPACE_GRACE_MS));

    private TimeSeriesWriterJob() {}

    public static void main(String[] args) throws Exception {
        JobArgs p = JobArgs.parse(NAME, SETTINGS, args);
        if (p.helpAsked()) {
            System.out.print(p.usage());
            return;
        }
        JobKafka kafka = new JobKafka(p, NAME);
        SerializableSupplier<SchemaRegistryClient> registry = kafka.registry();
        StreamExecutionEnvironment env = kafka.environment();
        KafkaSink<DeadLetterRecord> deadLetters = kafka.deadLetters();
        ElasticsearchEndpoint elasticsearch = ElasticsearchEndpoint.of(p);
        DataStream<NamespaceChange> control = ControlPlane.stream(env, kafka.bootstrap, kafka.clientConfig());
        Sink<IndexDoc> documents = new ElasticsearchBulkSink(
                elasticsearch,
                new ElasticsearchBulkSink.Limits(
                        p.number(ELASTICSEARCH_BULK_MB) * 1024 * 1024,
                        (int) p.number(ELASTICSEARCH_BULK_ACTIONS),
                        p.number(ELASTICSEARCH_BULK_INTERVAL_MS)));
        CassandraEndpoint cassandra = CassandraEndpoint.of(p);
        build(
                kafka.stream(
                        env,
                        org.apache.kafka.clients.consumer.OffsetResetStrategy.EARLIEST,
                        WatermarkStrategy.noWatermarks(),
                        TOPIC,
                        "timeseries-source",
                        TOPIC),
                new CassandraEventSink(cassandra, 128),
                documents,
                deadLetters,
                control,
                registry,
                p.number(JobSettings.UNKNOWN_NAMESPACE_GRACE_MS),
                elasticsearch,
                Provisioning.every(
                        p.number(LIFECYCLE_INTERVAL_MS), () -> new StoreNamespaceStorage(cassandra, elasticsearch)));
        env.execute(NAME);
    }

    /**
     * The job's graph: decode and plan -> Cassandra rows; the documents of indexed namespaces ->
     * {@link IndexTemplateGuard} -> Elasticsearch; dead letters; and the provisioning branch.
     *
     * @param elasticsearch Elasticsearch for index templates (null: documents go on untouched)
     */
    public static void build(
            DataStream<RawRecord> records,
            Sink<EventRow> rows,
            Sink<IndexDoc> documents,
            Sink<DeadLetterRecord> deadLetters,
            DataStream<NamespaceChange> control,
            SerializableSupplier<SchemaRegistryClient> registry,
            long unknownNamespaceGraceMs,
            ElasticsearchEndpoint elasticsearch,
            Provisioning provisioning) {
        ObjectReuse.enable(records.getExecutionEnvironment());
        SingleOutputStreamOperator<EventRow> planned = records.connect(ControlPlane.broadcast(control))
                .process(new EventDecoder(registry, unknownNamespaceGraceMs))
                .uid("decode-and-plan")
                .name("decode-and-plan");
        planned.sinkTo(rows).uid("cassandra-rows").name("cassandra-rows");
        planned.getSideOutput(EventDecoder.INDEX_DOCS)
                .process(new IndexTemplateGuard(elasticsearch))
                .uid("index-templates")
                .name("index-templates")
                .sinkTo(documents)
                .uid("elasticsearch-docs")
                .name("elasticsearch-docs");
        planned.getSideOutput(EventDecoder.DEAD_LETTERS)
                .sinkTo(deadLetters)
                .uid("dead-letters")
                .name("dead-letters");
        provisioning.attach(control);
    }
}
