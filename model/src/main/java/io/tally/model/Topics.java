package io.tally.model;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Tally's Kafka topics (docs/design.md): the one place their names are written in Java. The
 * launcher creates them from {@code model/topics.json}, which {@link #json()} writes and a unit
 * test keeps equal to this class; the Go exporter's constants are checked against that file too.
 */
public final class Topics {
    public static final String COUNTER_EVENTS = "tally.counter.events";
    public static final String TIMESERIES_EVENTS = "tally.timeseries.events";
    public static final String DEAD_LETTER = "tally.deadletter";
    public static final String ALERTS = "tally.alerts";
    public static final String COUNTER_ROLLUPS = "tally.counter.rollups";
    public static final String CONTROL_NAMESPACES = "tally.control.namespaces";
    public static final String SCHEMAS = "_schemas";

    // Scheduler data travels in the event topics under these namespaces (docs/design.md): the
    // runq exporter writes samples and switch-outs, NoisyNeighborJob its summaries and alerts.
    /** Run-queue samples: TimeSeriesEvents, time_series_id {@code host/container}. */
    public static final String SCHED_RUNQ = "sched.runq";
    /** Switch-outs by cause: CounterEvents, counter {@code host/container/cause}. */
    public static final String SCHED_SWITCH_OUT = "sched.switchout";
    /** NoisyNeighborJob's per-window summaries. */
    public static final String SCHED_SUMMARY = "sched.summary";
    /** NoisyNeighborJob's FIRING/RESOLVED alerts, as events. */
    public static final String SCHED_ALERTS = "sched.alerts";
    /** The scheduler namespaces by role, for model/topics.json. */
    public static final Map<String, String> SCHED_NAMESPACES = new TreeMap<>(Map.of(
            "runq", SCHED_RUNQ, "switchout", SCHED_SWITCH_OUT, "summary", SCHED_SUMMARY, "alerts", SCHED_ALERTS));

    private static final String WEEK_MS = Long.toString(7L * 24 * 3600 * 1000);
    private static final String FOUR_WEEKS_MS = Long.toString(4L * 7 * 24 * 3600 * 1000);

    /**
     * How a topic is created.
     *
     * @param id what other languages call it (model/topics.json: the launcher, the benchmarks)
     * @param partitioned true: as many partitions as the deployment's setting; false: exactly one
     *     (a total order: the control plane's changes, the registry's log)
     * @param config topic configs given at creation
     * @param valueSchema the simple name of the Avro schema of its values (subject
     *     {@code <topic>-value}), or null when the value is not one of Tally's schemas
     * @param keyFields the value's fields that its record key joins with '/' (what a compacted
     *     topic keeps one record of), empty when the key is something else
     */
    public record Spec(
            String id,
            String name,
            boolean partitioned,
            Map<String, String> config,
            String valueSchema,
            List<String> keyFields,
            String doc) {}

    public static final List<Spec> ALL = List.of(
            // LogAppendTime: the broker stamps counter events, so within a partition timestamps only
            // grow and the rollup's watermark (and so its immutable window) is exact
            new Spec(
                    "counter_events",
                    COUNTER_EVENTS,
                    true,
                    Map.of("retention.ms", WEEK_MS, "message.timestamp.type", "LogAppendTime"),
                    "CounterEvent",
                    List.of("namespace", "counter"),
                    "counter mutations, key namespace/counter"),
            // LogAppendTime too: an event is stored only within its window (plus the store grace) of
            // the broker's clock, so a time range behind that is final once the writer passed it
            // (the gateway's cache of closed ranges); a direct producer cannot backdate past it
            new Spec(
                    "timeseries_events",
                    TIMESERIES_EVENTS,
                    true,
                    Map.of("retention.ms", WEEK_MS, "message.timestamp.type", "LogAppendTime"),
                    "TimeSeriesEvent",
                    List.of("namespace", "time_series_id"),
                    "time-series events, key namespace/time_series_id"),
            new Spec(
                    "dead_letters",
                    DEAD_LETTER,
                    true,
                    Map.of("retention.ms", FOUR_WEEKS_MS),
                    "DeadLetter",
                    List.of(),
                    "what could not be processed, with the original bytes and a reason"),
            // compacted: the latest rollup of each counter is what a gateway's view is rebuilt from
            new Spec(
                    "counter_rollups",
                    COUNTER_ROLLUPS,
                    true,
                    Map.of("cleanup.policy", "compact", "min.cleanable.dirty.ratio", "0.1", "segment.ms", "600000"),
                    "CounterRollup",
                    List.of("namespace", "counter"),
                    "each counter's latest rollup (the gateways' counter view), key namespace/counter"),
            new Spec(
                    "alerts",
                    ALERTS,
                    true,
                    Map.of(),
                    "NoisyNeighborAlert",
                    List.of("host", "container"),
                    "noisy-neighbor alerts, key host/container"),
            new Spec(
                    "control_namespaces",
                    CONTROL_NAMESPACES,
                    false,
                    Map.of("cleanup.policy", "compact"),
                    null,
                    List.of(),
                    "Debezium change events of the control plane's namespaces table"),
            new Spec(
                    "schemas",
                    SCHEMAS,
                    false,
                    Map.of("cleanup.policy", "compact"),
                    null,
                    List.of(),
                    "the schema registry's log"));

    private Topics() {}

    /** The topics and the scheduler namespaces as JSON (the content of model/topics.json). */
    public static String json() {
        StringBuilder b = new StringBuilder("{\n  \"topics\": [\n");
        for (int i = 0; i < ALL.size(); i++) {
            Spec s = ALL.get(i);
            b.append("    {\"id\": ")
                    .append(quote(s.id()))
                    .append(", \"name\": ")
                    .append(quote(s.name()))
                    .append(", \"partitioned\": ")
                    .append(s.partitioned())
                    .append(", \"config\": {");
            int j = 0;
            for (Map.Entry<String, String> c : new TreeMap<>(s.config()).entrySet()) {
                b.append(j++ > 0 ? ", " : "")
                        .append(quote(c.getKey()))
                        .append(": ")
                        .append(quote(c.getValue()));
            }
            b.append("}, \"value_schema\": ")
                    .append(s.valueSchema() == null ? "null" : quote(s.valueSchema()))
                    .append(", \"doc\": ")
                    .append(quote(s.doc()))
                    .append(i < ALL.size() - 1 ? "},\n" : "}\n");
        }
        b.append("  ],\n  \"sched_namespaces\": {");
        int k = 0;
        for (Map.Entry<String, String> n : SCHED_NAMESPACES.entrySet()) {
            b.append(k++ > 0 ? ", " : "").append(quote(n.getKey())).append(": ").append(quote(n.getValue()));
        }
        return b.append("}\n}\n").toString();
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** Prints {@link #json()}: {@code java -cp tally-model.jar io.tally.model.Topics > model/topics.json}. */
    public static void main(String[] args) {
        System.out.print(json());
    }
}
