package io.tally.jobs.sched;

import io.tally.jobs.kafka.AvroRecordSerializer;
import io.tally.jobs.kafka.AvroRecordSerializer.Keyed;
import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.kafka.JobKafka;
import io.tally.serde.SchemaRegistryClient;
import io.tally.serde.TallySchemas;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * Noisy-neighbor detection over the runq exporter's events (which share the platform's
 * topics): per container (host/container), sliding event-time windows of run-queue latency
 * percentiles from a mergeable HdrHistogram sketch and switch-outs by cause, then
 * {@link NoisyNeighborDetector}. Alerts go to tally.alerts as NoisyNeighborAlert and, with
 * every window's summary, back into tally.timeseries.events (namespaces sched.alerts and
 * sched.summary), so the gateway's ReadEventRecords and SearchEventRecords serve them.
 *
 * <p>Arguments: --kafka.bootstrap, --registry.url, --group.id, --checkpoint.interval.ms,
 * --window.size.ms (60 s), --window.slide.ms (10 s), --rule.ratio (2), --rule.min.latency.us (1000),
 * --rule.min.switch.outs (100 a window).
 */
public final class NoisyNeighborJob {
    public static final String NAME = "tally-noisy-neighbor";
    public static final String ALERTS_TOPIC = "tally.alerts";
    public static final String EVENTS_TOPIC = "tally.timeseries.events";
    public static final String SUMMARY_NAMESPACE = "sched.summary";
    public static final String ALERT_NAMESPACE = "sched.alerts";

    private NoisyNeighborJob() {}

    public static void main(String[] args) throws Exception {
        ParameterTool p = ParameterTool.fromArgs(args);
        JobKafka kafka = new JobKafka(p);
        String bootstrap = kafka.bootstrap;
        SerializableSupplier<SchemaRegistryClient> registry = kafka.registry();
        StreamExecutionEnvironment env = kafka.environment();
        // scheduler data is only worth its recent past: a new deployment starts at the end
        KafkaSource<RawRecord> source = kafka.source(NAME, org.apache.kafka.clients.consumer.OffsetResetStrategy.LATEST,
                EVENTS_TOPIC, "tally.counter.events");
        NoisyNeighborRule rule = new NoisyNeighborRule(p.getDouble("rule.ratio", 2.0), p.getLong("rule.min.latency.us", 1000),
                p.getLong("rule.min.switch.outs", 100), 0.2);
        build(env.fromSource(source, WatermarkStrategy.noWatermarks(), "scheduler-events").uid("sched-source"),
                KafkaSink.<AlertRecord>builder().setBootstrapServers(bootstrap)
                        .setRecordSerializer(new AvroRecordSerializer<>(ALERTS_TOPIC, registry, NoisyNeighborJob::alert))
                        .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build(),
                KafkaSink.<SchedEvent>builder().setBootstrapServers(bootstrap)
                        .setRecordSerializer(new AvroRecordSerializer<>(EVENTS_TOPIC, registry, NoisyNeighborJob::timeSeriesEvent))
                        .setDeliveryGuarantee(DeliveryGuarantee.AT_LEAST_ONCE).build(),
                registry, Duration.ofMillis(p.getLong("window.size.ms", 60_000)), Duration.ofMillis(p.getLong("window.slide.ms", 10_000)), rule);
        env.execute(NAME);
    }

    public static void build(DataStream<RawRecord> records, Sink<AlertRecord> alerts, Sink<SchedEvent> events,
                             SerializableSupplier<SchemaRegistryClient> registry, Duration size, Duration slide,
                             NoisyNeighborRule rule) {
        DataStream<ContainerWindow> windows = records
                .process(new SchedDecoder(registry)).uid("sched-decode").name("sched-decode")
                .assignTimestampsAndWatermarks(WatermarkStrategy.<SchedObservation>forBoundedOutOfOrderness(Duration.ofSeconds(3))
                        .withTimestampAssigner((o, ts) -> o.timeMillis).withIdleness(Duration.ofSeconds(30)))
                .keyBy(SchedObservation::key)
                .window(SlidingEventTimeWindows.of(size, slide))
                .aggregate(new WindowSketch(), new Summarize()).uid("container-windows").name("container-windows");
        DataStream<AlertRecord> detected = windows.keyBy(ContainerWindow::key)
                .process(new NoisyNeighborDetector(rule)).uid("noisy-neighbor-rule").name("noisy-neighbor-rule");
        detected.sinkTo(alerts).uid("alerts").name("alerts");
        windows.map(NoisyNeighborJob::summaryEvent).union(detected.map(NoisyNeighborJob::alertEvent))
                .sinkTo(events).uid("sched-events").name("sched-events");
    }

    static final class Summarize extends ProcessWindowFunction<WindowSketch.Acc, ContainerWindow, String, TimeWindow> {
        @Override
        public void process(String key, Context ctx, Iterable<WindowSketch.Acc> accs, Collector<ContainerWindow> out) {
            for (WindowSketch.Acc acc : accs) {
                out.collect(WindowSketch.summary(key, ctx.window().getStart(), ctx.window().getEnd(), acc));
            }
        }
    }

    static Keyed alert(AlertRecord a) {
        ContainerWindow w = a.window;
        GenericRecord r = new GenericData.Record(TallySchemas.NOISY_NEIGHBOR_ALERT);
        r.put("host", w.host);
        r.put("container", w.container);
        r.put("state", new GenericData.EnumSymbol(TallySchemas.NOISY_NEIGHBOR_ALERT.getField("state").schema(), a.state));
        r.put("window_start", w.windowStartMillis * 1000);
        r.put("window_end", w.windowEndMillis * 1000);
        r.put("runq_p50_us", w.p50Us);
        r.put("runq_p90_us", w.p90Us);
        r.put("runq_p99_us", w.p99Us);
        r.put("baseline_p99_us", a.baselineP99Us);
        r.put("switch_outs_same_container", w.sameContainer);
        r.put("switch_outs_other_container", w.otherContainer);
        r.put("switch_outs_system", w.system);
        r.put("reason", a.reason);
        return new Keyed(w.key(), r);
    }

    static SchedEvent summaryEvent(ContainerWindow w) {
        return event(SUMMARY_NAMESPACE, w, "w" + w.windowEndMillis, Map.of("container", w.container,
                "samples", Long.toString(w.samples), "runq_mean_us", Long.toString(w.meanUs), "runq_p50_us", Long.toString(w.p50Us), "runq_p90_us", Long.toString(w.p90Us),
                "runq_p99_us", Long.toString(w.p99Us), "switch_outs_same_container", Long.toString(w.sameContainer),
                "switch_outs_other_container", Long.toString(w.otherContainer), "switch_outs_system", Long.toString(w.system)));
    }

    static SchedEvent alertEvent(AlertRecord a) {
        return event(ALERT_NAMESPACE, a.window, a.state + "-" + a.window.windowEndMillis, Map.of("container", a.window.container,
                "state", a.state, "runq_p99_us", Long.toString(a.window.p99Us), "reason", a.reason));
    }

    private static SchedEvent event(String namespace, ContainerWindow w, String eventId, Map<String, String> items) {
        SchedEvent e = new SchedEvent();
        e.namespace = namespace;
        e.timeSeriesId = w.key();
        e.eventTimeMicros = w.windowEndMillis * 1000;
        e.eventId = eventId;
        e.items.putAll(items);
        return e;
    }

    static Keyed timeSeriesEvent(SchedEvent s) {
        List<GenericRecord> its = new ArrayList<>();
        s.items.forEach((k, v) -> {
            GenericRecord i = new GenericData.Record(TallySchemas.EVENT_ITEM);
            i.put("key", k);
            i.put("value", ByteBuffer.wrap(v.getBytes(StandardCharsets.UTF_8)));
            its.add(i);
        });
        GenericRecord e = new GenericData.Record(TallySchemas.TIME_SERIES_EVENT);
        e.put("namespace", s.namespace);
        e.put("time_series_id", s.timeSeriesId);
        e.put("event_time", s.eventTimeMicros);
        e.put("event_id", s.eventId);
        e.put("items", its);
        e.put("source", NAME);
        return new Keyed(s.namespace + "/" + s.timeSeriesId, e);
    }
}
