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
 * Each container's state is also a gauge, {@value #FIRING_GAUGE} (1 while FIRING) in a
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

    public static final String FIRING_GAUGE = "noisy_neighbor_firing";

    /** Each container's state as its gauge reads it, set from every window (so after a restore too). */
    private transient Map<String, Integer> gauges;

    /**
     * @param silence how long after its last window a container counts as gone (a window's size)
     * @param holdDown how long a verdict must hold before the alert changes state
     */
    public NoisyNeighborDetector(NoisyNeighborRule rule, Duration silence, AlertHoldDown holdDown) {
        this.rule = rule;
        this.silenceMillis = silence.toMillis();
        this.holdDown = holdDown;
    }

    @Override
    public void open(OpenContext ctx) {
        baseline = getRuntimeContext()
                .getState(new ValueStateDescriptor<>("baseline", TypeInformation.of(Baseline.class)));
        firing = getRuntimeContext().getState(new ValueStateDescriptor<>("firing", Types.BOOLEAN));
        last = getRuntimeContext()
                .getState(new ValueStateDescriptor<>("last-window", TypeInformation.of(ContainerWindow.class)));
        changingSince = getRuntimeContext().getState(new ValueStateDescriptor<>("changing-since", Types.LONG));
        gauges = new HashMap<>();
    }

    private void show(String container, boolean isFiring) {
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
        if (Boolean.TRUE.equals(firing.value())) {
            last.update(w);
            ctx.timerService().registerEventTimeTimer(w.windowEndMillis + silenceMillis);
        } else {
            last.clear();
        }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<AlertRecord> out) throws Exception {
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
