package io.tally.model;

import java.util.Map;
import java.util.TreeMap;

/**
 * The namespaces of scheduler data (shared DESIGN.md): the runq exporter writes samples and
 * switch-outs into the shared event topics under these, and NoisyNeighborJob writes its window
 * summaries and alerts under the last two.
 */
public final class SchedNamespaces {
    /** Run-queue samples: TimeSeriesEvents, time_series_id {@code host/container}. */
    public static final String RUNQ = "sched.runq";
    /** Switch-outs by cause: CounterEvents, counter {@code host/container/cause}. */
    public static final String SWITCH_OUT = "sched.switchout";
    /** NoisyNeighborJob's per-window summaries. */
    public static final String SUMMARY = "sched.summary";
    /** NoisyNeighborJob's FIRING/RESOLVED alerts, as events. */
    public static final String ALERTS = "sched.alerts";

    /** By role, for model/topics.json. */
    public static final Map<String, String> BY_ROLE =
            new TreeMap<>(Map.of("runq", RUNQ, "switchout", SWITCH_OUT, "summary", SUMMARY, "alerts", ALERTS));

    private SchedNamespaces() {}
}
