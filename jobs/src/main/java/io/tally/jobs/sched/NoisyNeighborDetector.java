package io.tally.jobs.sched;

import io.tally.jobs.sched.NoisyNeighborRule.Baseline;
import io.tally.jobs.sched.NoisyNeighborRule.Verdict;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Applies {@link NoisyNeighborRule} to each container's windows in order: FIRING when a
 * noisy neighbor starts, RESOLVED when it ends, each once the verdict has held for the
 * {@link AlertHoldDown}; the baseline learns only from calm windows
 * ({@link NoisyNeighborRule#calm}), so neither a long incident nor its ramp-up becomes the new normal.
 * Each container that has fired has its state as a gauge, {@value #FIRING_GAUGE} (1 while FIRING) in a
 * {@code container} group, which Prometheus scrapes from the TaskManager and its alerting rule
 * (infra/prometheus/rules/noisy-neighbor.yml) turns into an alert.
 *
 * <p>A container that stops (or goes idle) while FIRING has no more windows to judge, so an
 * event-time timer resolves it once {@code silence} (a window's size) passed with none: without
 * it the alert, and the gauge, would fire forever for a container that is gone.
 */
public class NoisyNeighborDetector extends KeyedProcessFunction<String, ContainerWindow, AlertRecord> {
    private final NoisyNeighborRule rule;
    private final long silenceMillis;
    private final AlertHoldDown holdDown;
    private transient ValueState<Baseline> baseline;
    private transient ValueState<Boolean> firing;
    private transient ValueState<ContainerWindow> last;
    /** The end of the first window of the current run of verdicts that differ from the state. */
    private transient ValueState<Long> changingSince;
    /** The end of the container's newest window: its state is forgotten forgetAfter later. */
    private transient ValueState<Long> lastSeen;

    private final long forgetAfterMillis;

    public static final String FIRING_GAUGE = "noisy_neighbor_firing";

    /** Each fired container's state as its gauge reads it, set from every window (so after a restore too). */
    private transient Map<String, Integer> gauges;

    /**
     * @param silence how long after its last window a container counts as gone (a window's size)
     * @param holdDown how long a verdict must hold before the alert changes state
     * @param forgetAfter how long after its last window a container's baseline and state are
     *     dropped (longer than silence): containers come and go, and state kept for every one
     *     ever seen would grow without bound
     */
    public NoisyNeighborDetector(
            NoisyNeighborRule rule, Duration silence, AlertHoldDown holdDown, Duration forgetAfter) {
        if (forgetAfter.compareTo(silence) <= 0) {
            throw new IllegalArgumentException("a container's state must outlive its silence (" + silence + ")");
        }
        this.rule = rule;
        this.silenceMillis = silence.toMillis();
        this.holdDown = holdDown;
        this.forgetAfterMillis = forgetAfter.toMillis();
    }

    @Override
    public void open(OpenContext ctx) {
        baseline = getRuntimeContext()
                .getState(new ValueStateDescriptor<>("baseline", TypeInformation.of(Baseline.class)));
        firing = getRuntimeContext().getState(new ValueStateDescriptor<>("firing", Types.BOOLEAN));
        last = getRuntimeContext()
                .getState(new ValueStateDescriptor<>("last-window", TypeInformation.of(ContainerWindow.class)));
        changingSince = getRuntimeContext().getState(new ValueStateDescriptor<>("changing-since", Types.LONG));
        lastSeen = getRuntimeContext().getState(new ValueStateDescriptor<>("last-seen", Types.LONG));
        gauges = new HashMap<>();
    }

    /**
     * Sets the container's gauge, registering it on its first FIRING: Flink cannot unregister a
     * metric, and a gauge for every container ever seen would grow with container churn (every
     * pod of a Kubernetes host) in the TaskManager and in Prometheus.
     */
    private void show(String container, boolean isFiring) {
        if (!isFiring && !gauges.containsKey(container)) {
            return;
        }
        if (gauges.put(container, isFiring ? 1 : 0) == null) {
            getRuntimeContext()
                    .getMetricGroup()
                    .addGroup("container", container)
                    .gauge(FIRING_GAUGE, (Gauge<Integer>) () -> gauges.getOrDefault(container, 0));
        }
    }

    @Override
    public void processElement(ContainerWindow w, Context ctx, Collector<AlertRecord> out) throws Exception {
        Baseline b = baseline.value();
        Verdict v = rule.judge(w, b);
        boolean wasFiring = Boolean.TRUE.equals(firing.value());
        boolean noisy = v == Verdict.NOISY_NEIGHBOR;
        if (noisy == wasFiring) {
            changingSince.clear();
        } else {
            Long since = changingSince.value();
            if (since == null) {
                since = w.windowEndMillis;
                changingSince.update(since);
            }
            if (holdDown.held(noisy, since, w.windowEndMillis)) {
                changingSince.clear();
                firing.update(noisy);
                out.collect(
                        noisy
                                ? AlertRecord.of(w, "FIRING", b.p99Us, rule.reason(v, w, b))
                                : AlertRecord.of(
                                        w, "RESOLVED", b == null ? 0 : b.p99Us, rule.reason(Verdict.NORMAL, w, b)));
            }
        }
        show(ctx.getCurrentKey(), Boolean.TRUE.equals(firing.value()));
        if (v == Verdict.NORMAL && rule.calm(w, b)) {
            baseline.update(rule.learn(b, w));
        }
        Long seen = lastSeen.value();
        if (seen != null) { // one forget timer per container, not one per window (deleted first: a
            // silence timer registered below may fall on the same instant)
            ctx.timerService().deleteEventTimeTimer(seen + forgetAfterMillis);
        }
        lastSeen.update(w.windowEndMillis);
        ctx.timerService().registerEventTimeTimer(w.windowEndMillis + forgetAfterMillis);
        if (Boolean.TRUE.equals(firing.value())) {
            last.update(w);
            ctx.timerService().registerEventTimeTimer(w.windowEndMillis + silenceMillis);
        } else {
            last.clear();
        }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<AlertRecord> out) throws Exception {
        Long seen = lastSeen.value();
        if (seen != null && seen + forgetAfterMillis <= timestamp) {
            // gone for forgetAfter: it was RESOLVED (if FIRING) a silence after its last window
            baseline.clear();
            firing.clear();
            last.clear();
            changingSince.clear();
            lastSeen.clear();
            return;
        }
        ContainerWindow w = last.value();
        // an older timer of a container whose windows went on is stale
        if (w == null || !Boolean.TRUE.equals(firing.value()) || w.windowEndMillis + silenceMillis > timestamp) {
            return;
        }
        ContainerWindow gone = new ContainerWindow();
        gone.host = w.host;
        gone.container = w.container;
        gone.windowStartMillis = w.windowEndMillis;
        gone.windowEndMillis = timestamp;
        Baseline b = baseline.value();
        firing.update(false);
        last.clear();
        changingSince.clear();
        out.collect(AlertRecord.of(
                gone,
                "RESOLVED",
                b == null ? 0 : b.p99Us,
                "gone: no run-queue samples for " + silenceMillis / 1000 + " s (the container stopped or went idle)"));
        show(ctx.getCurrentKey(), false);
    }
}
