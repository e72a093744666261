package io.tally.jobs.timeseries;

import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.kafka.JobKafka;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.cassandra.EventRow;
import io.tally.jobs.cassandra.CassandraEventSink;

import io.tally.jobs.control.ControlPlane;
import io.tally.namespace.NamespaceChange;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import java.net.URI;
import org.apache.flink.connector.elasticsearch.sink.Elasticsearch7SinkBuilder;
import org.apache.flink.connector.elasticsearch.sink.FlushBackoffType;
import org.apache.http.HttpHost;
import org.elasticsearch.action.index.IndexRequest;
import io.tally.serde.SchemaRegistryClient;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
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
 * Namespaces come from the control plane ({@link ControlPlane}, broadcast state). A parallelism-1
 * branch, the {@link NamespaceProvisioner}, provisions a namespace when it is created or changed
 * and retires it when deleted, and runs the {@link SliceLifecycle} every lifecycle.interval.ms:
 * slices created ahead, closed after close_after, dropped (table and index) after delete_after.
 *
 * <p>Arguments: --kafka.bootstrap, --registry.url, --cassandra.host, --cassandra.port,
 * --elasticsearch.url, --unknown.namespace.grace.ms (10 s), --group.id, --checkpoint.interval.ms, --lifecycle.interval.ms.
 */
public final class TimeSeriesWriterJob {
    public static final String NAME = "tally-timeseries-writer";
    public static final String TOPIC = "tally.timeseries.events";

    private TimeSeriesWriterJob() {}

    public static void main(String[] args) throws Exception {
        ParameterTool p = ParameterTool.fromArgs(args);
        JobKafka kafka = new JobKafka(p);
        SerializableSupplier<SchemaRegistryClient> registry = kafka.registry();
        StreamExecutionEnvironment env = kafka.environment();
        KafkaSource<RawRecord> source = kafka.source(NAME, org.apache.kafka.clients.consumer.OffsetResetStrategy.EARLIEST, TOPIC);
        KafkaSink<DeadLetterRecord> deadLetters = kafka.deadLetters();
        String elasticsearch = p.get("elasticsearch.url", "http://127.0.0.1:9200");
        DataStream<NamespaceChange> control = ControlPlane.stream(env, kafka.bootstrap);
        URI es = URI.create(elasticsearch);
        Sink<IndexDoc> documents = new Elasticsearch7SinkBuilder<IndexDoc>()
                .setHosts(new HttpHost(es.getHost(), es.getPort(), es.getScheme()))
                .setEmitter((doc, context, indexer) -> indexer.add(new IndexRequest(doc.index).id(doc.id).source(doc.source)))
                .setBulkFlushMaxActions(1000)
                .setBulkFlushInterval(1000)
                .setBulkFlushBackoffStrategy(FlushBackoffType.EXPONENTIAL, 8, 500)
                .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE)
                .build();
        build(env.fromSource(source, WatermarkStrategy.noWatermarks(), TOPIC).uid("timeseries-source"),
                new CassandraEventSink(p.get("cassandra.host", "127.0.0.1"), p.getInt("cassandra.port", 9042), 128),
                documents, deadLetters, control, registry, p.getLong("unknown.namespace.grace.ms", 10_000), elasticsearch);
        long every = p.getLong("lifecycle.interval.ms", 60_000);
        DataGeneratorSource<Long> ticks = new DataGeneratorSource<>(i -> i, Long.MAX_VALUE,
                RateLimiterStrategy.perSecond(1000.0 / every), Types.LONG);
        env.fromSource(ticks, WatermarkStrategy.noWatermarks(), "lifecycle-ticks").uid("lifecycle-ticks").setParallelism(1)
                .connect(ControlPlane.broadcast(control))
                .process(new NamespaceProvisioner(p.get("cassandra.host", "127.0.0.1"), p.getInt("cassandra.port", 9042),
                        elasticsearch)).uid("namespace-provisioner").name("namespace-provisioner").setParallelism(1)
                .sinkTo(new DiscardingSink<>()).uid("lifecycle-done").setParallelism(1);
        env.execute(NAME);
    }

    public static void build(DataStream<RawRecord> records, Sink<EventRow> rows, Sink<IndexDoc> documents,
                             Sink<DeadLetterRecord> deadLetters, DataStream<NamespaceChange> control,
                             SerializableSupplier<SchemaRegistryClient> registry, long unknownNamespaceGraceMs,
                             String elasticsearch) {
        SingleOutputStreamOperator<EventRow> planned = records.connect(ControlPlane.broadcast(control))
                .process(new EventDecoder(registry, unknownNamespaceGraceMs, elasticsearch)).uid("decode-and-plan").name("decode-and-plan");
        planned.sinkTo(rows).uid("cassandra-rows").name("cassandra-rows");
        planned.getSideOutput(EventDecoder.INDEX_DOCS).sinkTo(documents).uid("elasticsearch-docs").name("elasticsearch-docs");
        planned.getSideOutput(EventDecoder.DEAD_LETTERS).sinkTo(deadLetters).uid("dead-letters").name("dead-letters");
    }
}
