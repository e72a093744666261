package io.tally.jobs.sched;

import java.io.Serializable;

/**
 * The article's rule: a container has a noisy neighbor when its run-queue latency rises AND
 * its tasks are switched out by other containers or system services more than before. A rise
 * in latency with switch-outs by its own tasks (or none) is the container being throttled by
 * its own CPU quota or load, which is not a neighbor's fault. "Rises" means above both an
 * absolute floor and `ratio` times the container's baseline (an EWMA over quiet windows, judged
 * only once five of them were learnt). Each preemption cause is compared with its own baseline
 * (switch-outs by other containers, by system services), so a host whose services already
 * preempt a lot (a busy machine) does not hide a new neighbor container behind that background.
 * Latency: a rise of the p99; when another container's preemptions rose (attributed, so not
 * ambient noise), a rise of the p90 is enough too, since a neighbor's busy loops delay the bulk
 * of wake-ups while a host whose tail is already long barely doubles its p99. System services
 * alone need the p99 to rise (on a loaded host their jitter moves the p90 all the time).
 */
public final class NoisyNeighborRule implements Serializable {
    public final double ratio;
    public final long minP99Us;
    public final long minSwitchOuts;
    public final double alpha;
    /** Normal windows learnt before anything is judged: a new container's first windows are partial. */
    public final int minBaselineWindows = 5;

    public NoisyNeighborRule(double ratio, long minP99Us, long minSwitchOuts, double alpha) {
        this.ratio = ratio;
        this.minP99Us = minP99Us;
        this.minSwitchOuts = minSwitchOuts;
        this.alpha = alpha;
    }

    public static NoisyNeighborRule defaults() {
        return new NoisyNeighborRule(2.0, 1_000, 100, 0.2);
    }

    /** A container's normal: EWMAs of its latency percentiles and of switch-outs by cause per window. */
    public static class Baseline implements Serializable {
        public double p90Us;
        public double p99Us;
        public double otherContainer;
        public double system;
        public long windows;
    }

    public enum Verdict { NOISY_NEIGHBOR, SELF_THROTTLED, NORMAL }

    public Verdict judge(ContainerWindow w, Baseline b) {
        if (b == null || b.windows < minBaselineWindows || w.samples == 0) {
            return Verdict.NORMAL;
        }
        boolean p99Rose = rose(w.p99Us, b.p99Us, minP99Us);
        boolean p90Rose = rose(w.p90Us, b.p90Us, minP99Us);
        if (!p99Rose && !p90Rose) {
            return Verdict.NORMAL;
        }
        boolean othersOutnumberOwn = w.byOthers() > w.sameContainer;
        boolean neighborContainer = rose(w.otherContainer, b.otherContainer, minSwitchOuts);
        boolean systemServices = rose(w.system, b.system, minSwitchOuts);
        if (othersOutnumberOwn && (neighborContainer || (systemServices && p99Rose))) {
            return Verdict.NOISY_NEIGHBOR;
        }
        return p99Rose ? Verdict.SELF_THROTTLED : Verdict.NORMAL;
    }

    /** Folds a window the container did not suffer in into its baseline. */
    public Baseline learn(Baseline b, ContainerWindow w) {
        Baseline out = b == null ? new Baseline() : b;
        if (w.samples == 0) {
            return out;
        }
        boolean first = out.windows == 0;
        out.p90Us = ewma(first, out.p90Us, w.p90Us);
        out.p99Us = ewma(first, out.p99Us, w.p99Us);
        out.otherContainer = ewma(first, out.otherContainer, w.otherContainer);
        out.system = ewma(first, out.system, w.system);
        out.windows++;
        return out;
    }

    private boolean rose(long now, double baseline, long floor) {
        return now >= Math.max(floor, ratio * baseline);
    }

    private double ewma(boolean first, double previous, long value) {
        return first ? value : alpha * value + (1 - alpha) * previous;
    }

    public String reason(Verdict v, ContainerWindow w, Baseline b) {
        return switch (v) {
            case NOISY_NEIGHBOR -> String.format("run-queue p99 %d us (baseline %.0f us) while switched out %d times by "
                    + "other containers and %d by system services (baseline %.0f), %d by its own tasks",
                    w.p99Us, b.p99Us, w.otherContainer, w.system, b.otherContainer + b.system, w.sameContainer);
            case SELF_THROTTLED -> String.format("run-queue p99 %d us (baseline %.0f us) but preempted mostly by its own "
                    + "tasks (%d vs %d by others): its own quota or load, not a neighbor", w.p99Us, b.p99Us, w.sameContainer, w.byOthers());
            case NORMAL -> "back to normal: run-queue p99 " + w.p99Us + " us";
        };
    }
}
