package io.tally.jobs.sched;

import io.tally.jobs.config.JobArgs;
import io.tally.jobs.config.JobSetting;
import io.tally.jobs.config.JobSettings;
import io.tally.jobs.config.ObjectReuse;
import io.tally.jobs.kafka.AvroRecordSerializer.Keyed;
import io.tally.jobs.kafka.JobKafka;
import io.tally.jobs.kafka.RawRecord;
import io.tally.model.Micros;
import io.tally.model.Topics;
import io.tally.serde.SchemaRegistryClient;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.function.SerializableSupplier;
import tally.v1.AlertState;
import tally.v1.EventItem;
import tally.v1.NoisyNeighborAlert;
import tally.v1.TimeSeriesEvent;

/**
 * Noisy-neighbor detection over the runq exporter's events (which share the platform's
 * topics): per container (host/container), sliding event-time windows of run-queue latency
 * percentiles from a mergeable HdrHistogram sketch and switch-outs by cause, then
 * {@link NoisyNeighborDetector}. Alerts go to tally.alerts as NoisyNeighborAlert and, with
 * every window's summary, back into tally.timeseries.events (namespaces sched.alerts and
 * sched.summary), so the gateway's ReadEventRecords and SearchEventRecords serve them.
 *
 * <p>Arguments: {@link #SETTINGS} ({@code --help} lists them).
 */
public final class NoisyNeighborJob {
    public static final String NAME = "tally-noisy-neighbor";
    public static final String ALERTS_TOPIC = Topics.ALERTS;
    public static final String EVENTS_TOPIC = Topics.TIMESERIES_EVENTS;
    public static final String SUMMARY_NAMESPACE = Topics.SCHED_SUMMARY;
    public static final String ALERT_NAMESPACE = Topics.SCHED_ALERTS;

    public static final JobSetting WINDOW_SIZE_MS =
            new JobSetting("window.size.ms", JobSetting.Kind.MILLIS, "60000", "sliding window size per container");
    public static final JobSetting WINDOW_SLIDE_MS =
            new JobSetting("window.slide.ms", JobSetting.Kind.MILLIS, "10000", "sliding window slide");
    public static final JobSetting RULE_RATIO = new JobSetting(
            "rule.ratio",
            JobSetting.Kind.RATIO,
            "2.0",
            "how many times its baseline a signal must be to count as risen");
    public static final JobSetting RULE_MIN_LATENCY_US = new JobSetting(
            "rule.min.latency.us", JobSetting.Kind.COUNT, "1000", "floor of the latency signal (p99, microseconds)");
    public static final JobSetting RULE_MIN_SWITCH_OUTS = new JobSetting(
            "rule.min.switch.outs",
            JobSetting.Kind.COUNT,
            "100",
            "floor of switch-outs by other containers or the system in a window");
    public static final JobSetting RULE_MIN_WAIT_MS = new JobSetting(
            "rule.min.wait.ms",
            JobSetting.Kind.MILLIS,
            "100",
            "floor of the run-queue wait behind other containers' or the system's tasks in a window"
                    + " (summed over the sampled wake-ups)");
    public static final JobSetting ALERT_FOR_MS = new JobSetting(
            "alert.for.ms",
            JobSetting.Kind.MILLIS,
            "60000",
            "how long (between window ends) a container must keep being judged noisy before its alert"
                    + " FIRES, like Prometheus's `for` (a window's size by default)");
    public static final JobSetting ALERT_KEEP_FIRING_FOR_MS = new JobSetting(
            "alert.keep.firing.for.ms",
            JobSetting.Kind.MILLIS,
            "60000",
            "how long a FIRING alert's container must be judged normal before it is RESOLVED, like"
                    + " Prometheus's `keep_firing_for`");
    public static final JobSetting FORGET_AFTER_MS = new JobSetting(
            "container.forget.after.ms",
            JobSetting.Kind.MILLIS,
            "3600000",
            "how long after its last window a container's baseline and alert state are dropped"
                    + " (containers come and go; one back later learns a new baseline)");
    /** Every argument the job takes. */
    public static final List<JobSetting> SETTINGS = JobSettings.of(
            JobSettings.kafka(NAME, "500"),
            List.of(
                    WINDOW_SIZE_MS,
                    WINDOW_SLIDE_MS,
                    RULE_RATIO,
                    RULE_MIN_LATENCY_US,
                    RULE_MIN_SWITCH_OUTS,
                    RULE_MIN_WAIT_MS,
                    ALERT_FOR_MS,
                    ALERT_KEEP_FIRING_FOR_MS,
                    FORGET_AFTER_MS));

    private NoisyNeighborJob() {}

    public static void main(String[] args) throws Exception {
        JobArgs p = JobArgs.parse(NAME, SETTINGS, args);
        if (p.helpAsked()) {
            System.out.print(p.usage());
            return;
        }
        JobKafka kafka = new JobKafka(p, NAME);
        SerializableSupplier<SchemaRegistryClient> registry = kafka.registry();
        StreamExecutionEnvironment env = kafka.environment();
        NoisyNeighborRule rule = new NoisyNeighborRule(
                p.ratio(RULE_RATIO),
                p.number(RULE_MIN_LATENCY_US),
                p.number(RULE_MIN_SWITCH_OUTS),
                p.number(RULE_MIN_WAIT_MS) * 1000,
                0.2);
        build(
                kafka.stream( // scheduler data is only worth its recent past: a new deployment starts at the end
                        env,
                        org.apache.kafka.clients.consumer.OffsetResetStrategy.LATEST,
                        WatermarkStrategy.noWatermarks(),
                        "scheduler-events",
                        "sched-source",
                        EVENTS_TOPIC,
                        Topics.COUNTER_EVENTS),
                kafka.<AlertRecord>avro(ALERTS_TOPIC, NoisyNeighborJob::alert),
                kafka.<SchedEvent>avro(EVENTS_TOPIC, NoisyNeighborJob::timeSeriesEvent),
                registry,
                Duration.ofMillis(p.number(WINDOW_SIZE_MS)),
                Duration.ofMillis(p.number(WINDOW_SLIDE_MS)),
                rule,
                new AlertHoldDown(
                        Duration.ofMillis(p.number(ALERT_FOR_MS)),
                        Duration.ofMillis(p.number(ALERT_KEEP_FIRING_FOR_MS))),
                Duration.ofMillis(p.number(FORGET_AFTER_MS)));
        env.execute(NAME);
    }

    public static void build(
            DataStream<RawRecord> records,
            Sink<AlertRecord> alerts,
            Sink<SchedEvent> events,
            SerializableSupplier<SchemaRegistryClient> registry,
            Duration size,
            Duration slide,
            NoisyNeighborRule rule,
            AlertHoldDown holdDown,
            Duration forgetAfter) {
        ObjectReuse.enable(records.getExecutionEnvironment());
        DataStream<ContainerWindow> windows = records.process(new SchedDecoder(registry))
                .uid("sched-decode")
                .name("sched-decode")
                .assignTimestampsAndWatermarks(
                        WatermarkStrategy.<SchedObservation>forBoundedOutOfOrderness(Duration.ofSeconds(3))
                                .withTimestampAssigner((o, ts) -> o.timeMillis)
                                .withIdleness(Duration.ofSeconds(30)))
                .uid("sched-watermarks")
                .name("sched-watermarks")
                .keyBy(SchedObservation::key)
                .window(SlidingEventTimeWindows.of(size, slide))
                .aggregate(new WindowSketch(), new Summarize())
                .uid("container-windows")
                .name("container-windows");
        DataStream<AlertRecord> detected = windows.keyBy(ContainerWindow::key)
                .process(new NoisyNeighborDetector(rule, size, holdDown, forgetAfter))
                .uid("noisy-neighbor-rule")
                .name("noisy-neighbor-rule");
        detected.sinkTo(alerts).uid("alerts").name("alerts");
        windows.map(NoisyNeighborJob::summaryEvent)
                .uid("window-summaries")
                .name("window-summaries")
                .union(detected.map(NoisyNeighborJob::alertEvent)
                        .uid("alert-events")
                        .name("alert-events"))
                .sinkTo(events)
                .uid("sched-events")
                .name("sched-events");
    }

    static final class Summarize extends ProcessWindowFunction<WindowSketch.Acc, ContainerWindow, String, TimeWindow> {
        @Override
        public void process(String key, Context ctx, Iterable<WindowSketch.Acc> accs, Collector<ContainerWindow> out) {
            for (WindowSketch.Acc acc : accs) {
                out.collect(WindowSketch.summary(
                        key, ctx.window().getStart(), ctx.window().getEnd(), acc));
            }
        }
    }

    static Keyed alert(AlertRecord a) {
        ContainerWindow w = a.window;
        NoisyNeighborAlert r = NoisyNeighborAlert.newBuilder()
                .setHost(w.host)
                .setContainer(w.container)
                .setState(AlertState.valueOf(a.state))
                .setWindowStart(Instant.ofEpochMilli(w.windowStartMillis))
                .setWindowEnd(Instant.ofEpochMilli(w.windowEndMillis))
                .setRunqP50Us(w.p50Us)
                .setRunqP90Us(w.p90Us)
                .setRunqP99Us(w.p99Us)
                .setBaselineP99Us(a.baselineP99Us)
                .setSwitchOutsSameContainer(w.sameContainer)
                .setSwitchOutsOtherContainer(w.otherContainer)
                .setSwitchOutsSystem(w.system)
                .setRunqWaitBehindSameContainerUs(w.waitSameUs)
                .setRunqWaitBehindOtherContainerUs(w.waitOtherUs)
                .setRunqWaitBehindSystemUs(w.waitSystemUs)
                .setReason(a.reason)
                .build();
        return new Keyed(w.key(), r);
    }

    static SchedEvent summaryEvent(ContainerWindow w) {
        return event(
                SUMMARY_NAMESPACE,
                w,
                "w" + w.windowEndMillis,
                Map.ofEntries(
                        Map.entry("container", w.container),
                        Map.entry("samples", Long.toString(w.samples)),
                        Map.entry("runq_mean_us", Long.toString(w.meanUs)),
                        Map.entry("runq_p50_us", Long.toString(w.p50Us)),
                        Map.entry("runq_p90_us", Long.toString(w.p90Us)),
                        Map.entry("runq_p99_us", Long.toString(w.p99Us)),
                        Map.entry("switch_outs_same_container", Long.toString(w.sameContainer)),
                        Map.entry("switch_outs_other_container", Long.toString(w.otherContainer)),
                        Map.entry("switch_outs_system", Long.toString(w.system)),
                        Map.entry("runq_wait_behind_same_container_us", Long.toString(w.waitSameUs)),
                        Map.entry("runq_wait_behind_other_container_us", Long.toString(w.waitOtherUs)),
                        Map.entry("runq_wait_behind_system_us", Long.toString(w.waitSystemUs))));
    }

    static SchedEvent alertEvent(AlertRecord a) {
        return event(
                ALERT_NAMESPACE,
                a.window,
                a.state + "-" + a.window.windowEndMillis,
                Map.of(
                        "container",
                        a.window.container,
                        "state",
                        a.state,
                        "runq_p99_us",
                        Long.toString(a.window.p99Us),
                        "reason",
                        a.reason));
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
        List<EventItem> its = new ArrayList<>();
        s.items.forEach((k, v) -> its.add(new EventItem(k, ByteBuffer.wrap(v.getBytes(StandardCharsets.UTF_8)))));
        TimeSeriesEvent e = TimeSeriesEvent.newBuilder()
                .setNamespace(s.namespace)
                .setTimeSeriesId(s.timeSeriesId)
                .setEventTime(Micros.toInstant(s.eventTimeMicros))
                .setEventId(s.eventId)
                .setItems(its)
                .setSource(NAME)
                .build();
        return new Keyed(s.namespace + "/" + s.timeSeriesId, e);
    }
}
