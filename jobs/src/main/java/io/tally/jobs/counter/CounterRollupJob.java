package io.tally.jobs.counter;

import io.tally.jobs.cassandra.CassandraEndpoint;
import io.tally.jobs.cassandra.CassandraEventSink;
import io.tally.jobs.cassandra.EventRow;
import io.tally.jobs.config.JobArgs;
import io.tally.jobs.config.JobSetting;
import io.tally.jobs.config.JobSettings;
import io.tally.jobs.config.ObjectReuse;
import io.tally.jobs.control.ControlPlane;
import io.tally.jobs.kafka.AvroRecordSerializer;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.JobKafka;
import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.state.SerializerTypeInfo;
import io.tally.model.Topics;
import io.tally.namespace.NamespaceChange;
import io.tally.serde.SchemaRegistryClient;
import java.util.List;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.function.SerializableSupplier;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;

/**
 * Counts tally.counter.events: {@link CounterEventDecoder} (window, namespace, dead letters),
 * then per counter either {@link CounterRollupFunction} (EVENTUAL, ACCURATE: dedup, event log,
 * immutable-window rollups) or {@link BestEffortAggregator} (BEST_EFFORT), into the
 * counter_rollups tables. A parallelism-1 branch writes {@link Heartbeats} into the source topic
 * so event time advances on quiet partitions. Sources and sinks are arguments of
 * {@link #build}, so a MiniCluster test runs the same pipeline with test ones.
 *
 * <p>Arguments: {@link #SETTINGS} ({@code --help} lists them).
 */
public final class CounterRollupJob {
    public static final String NAME = "tally-counter-rollup";
    public static final String TOPIC = Topics.COUNTER_EVENTS;

    public static final JobSetting HEARTBEAT_INTERVAL_MS = new JobSetting(
            "heartbeat.interval.ms",
            JobSetting.Kind.MILLIS,
            "250",
            "how often every partition of the topic gets a heartbeat (event time moves on quiet partitions)");
    public static final JobSetting IDLE_COUNTER_MS = new JobSetting(
            "counter.state.idle.ms",
            JobSetting.Kind.COUNT,
            "600000",
            "how long a counter stays rolled up with nothing pending before its state leaves the job (the heap"
                    + " backend writes every counter it holds into every checkpoint); its next mutation reads its rollup"
                    + " back from counter_rollups. 0 keeps every counter ever touched. Only counters that were let go"
                    + " are read back (a filter in the job's state), whatever this is set to later");
    /** Every argument the job takes. */
    public static final List<JobSetting> SETTINGS = JobSettings.of(
            JobSettings.kafka(NAME),
            JobSettings.CASSANDRA,
            List.of(HEARTBEAT_INTERVAL_MS, JobSettings.UNKNOWN_NAMESPACE_GRACE_MS, IDLE_COUNTER_MS));

    /**
     * When an idle counter leaves the job's state, and where it is read back from.
     *
     * @param idleMs 0: never (every counter ever touched stays)
     */
    public record IdleCounterPolicy(CounterRollupStore store, long idleMs) implements java.io.Serializable {
        /** Counters stay, and nothing is read back: tests whose sinks are not a store (the job reads Cassandra). */
        public static final IdleCounterPolicy KEEP = new IdleCounterPolicy(CounterRollupStore.NONE, 0);
    }

    private CounterRollupJob() {}

    public static void main(String[] args) throws Exception {
        JobArgs p = JobArgs.parse(NAME, SETTINGS, args);
        if (p.helpAsked()) {
            System.out.print(p.usage());
            return;
        }
        JobKafka kafka = new JobKafka(p, NAME);
        String bootstrap = kafka.bootstrap;
        SerializableSupplier<SchemaRegistryClient> registry = kafka.registry();
        StreamExecutionEnvironment env = kafka.environment();
        // per-partition watermarks from LogAppendTime: monotonic within a partition
        WatermarkStrategy<RawRecord> watermarks = WatermarkStrategy.<RawRecord>forMonotonousTimestamps()
                .withTimestampAssigner((r, ts) -> r.timestampMillis);
        CassandraEndpoint cassandra = CassandraEndpoint.of(p);
        int partitions = kafka.partitions(TOPIC);
        Heartbeats.Branch heartbeats = new Heartbeats.Branch(
                KafkaSink.<Long>builder()
                        .setBootstrapServers(bootstrap)
                        .setRecordSerializer(new Heartbeats.Serializer(TOPIC, partitions))
                        .setKafkaProducerConfig(kafka.producerConfig())
                        .setDeliveryGuarantee(DeliveryGuarantee.NONE)
                        .build(),
                partitions,
                p.number(HEARTBEAT_INTERVAL_MS),
                Long.MAX_VALUE);
        build(
                kafka.stream(env, OffsetResetStrategy.EARLIEST, watermarks, TOPIC, "counter-source", TOPIC),
                ControlPlane.stream(env, bootstrap, kafka.clientConfig()),
                new CassandraEventSink(cassandra, 128),
                new CassandraRollupSink(cassandra),
                kafka.<RollupWrite>avro(
                        Topics.COUNTER_ROLLUPS,
                        w -> new AvroRecordSerializer.Keyed(w.namespace + "/" + w.counter, w.toAvro())),
                kafka.deadLetters(),
                registry,
                p.number(JobSettings.UNKNOWN_NAMESPACE_GRACE_MS),
                heartbeats,
                new IdleCounterPolicy(new CassandraCounterRollupStore(cassandra), p.number(IDLE_COUNTER_MS)));
        env.execute(NAME);
    }

    public static void build(
            DataStream<RawRecord> records,
            DataStream<NamespaceChange> control,
            Sink<EventRow> eventLog,
            Sink<RollupWrite> rollups,
            Sink<RollupWrite> view,
            Sink<DeadLetterRecord> deadLetters,
            SerializableSupplier<SchemaRegistryClient> registry,
            long unknownNamespaceGraceMs,
            Heartbeats.Branch heartbeats,
            IdleCounterPolicy idleCounters) {
        ObjectReuse.enable(records.getExecutionEnvironment());
        SingleOutputStreamOperator<CounterMutation> decoded = records.connect(ControlPlane.broadcast(control))
                .process(new CounterEventDecoder(registry, unknownNamespaceGraceMs))
                .uid("counter-decode")
                .name("counter-decode");
        SingleOutputStreamOperator<RollupWrite> durable = decoded.filter(m -> !m.bestEffort)
                .uid("durable-counters")
                .name("durable-counters")
                .keyBy(CounterMutation::key, SerializerTypeInfo.STRING_KEY)
                .transform(
                        "counter-rollup",
                        TypeInformation.of(RollupWrite.class),
                        new CounterRollupOperator(idleCounters.store(), idleCounters.idleMs()))
                .uid("counter-rollup")
                .name("counter-rollup");
        DataStream<RollupWrite> bestEffort = decoded.filter(m -> m.bestEffort)
                .uid("best-effort-counters")
                .name("best-effort-counters")
                .keyBy(CounterMutation::key, SerializerTypeInfo.STRING_KEY)
                .process(new BestEffortAggregator(idleCounters.store(), idleCounters.idleMs()))
                .uid("best-effort-aggregate")
                .name("best-effort-aggregate");
        DataStream<RollupWrite> written = durable.union(bestEffort);
        written.filter(RollupWrite::stored)
                .uid("rollup-table-writes")
                .name("rollup-table-writes")
                .sinkTo(rollups)
                .uid("counter-rollups")
                .name("counter-rollups");
        // rollups (and ACCURATE live totals) also go to the compacted tally.counter.rollups: the gateways' view
        written.filter(RollupWrite::viewed)
                .uid("rollups-for-the-view")
                .name("rollups-for-the-view")
                .sinkTo(view)
                .uid("counter-view")
                .name("counter-view");
        durable.getSideOutput(CounterRollupFunction.EVENT_LOG)
                .sinkTo(eventLog)
                .uid("counter-event-log")
                .name("counter-event-log");
        decoded.getSideOutput(CounterEventDecoder.DEAD_LETTERS)
                .union(durable.getSideOutput(CounterRollupFunction.DEAD_LETTERS))
                .sinkTo(deadLetters)
                .uid("counter-dead-letters")
                .name("counter-dead-letters");
        heartbeats.attach(records.getExecutionEnvironment());
    }
}
