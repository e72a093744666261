package io.tally.jobs.sched;

import java.io.Serializable;

/**
 * The article's rule: a container has a noisy neighbor when its run-queue latency rises AND
 * its tasks are switched out by other containers or system services more than before. A rise
 * in latency with switch-outs by its own tasks (or none) is the container being throttled by
 * its own CPU quota or load, which is not a neighbor's fault. "Rises" means above both an
 * absolute floor and `ratio` times the container's baseline (an EWMA over calm windows, judged
 * only once five full windows were learnt). Each preemption cause is compared with its own
 * baseline (switch-outs by other containers, by system services), so a host whose services
 * already preempt a lot (a busy machine) does not hide a new neighbor container behind that
 * background. Latency: a rise of the p99; when another container's preemptions rose (attributed,
 * so not ambient noise), a rise of the p90 or of the mean wait is enough too, since a neighbor's
 * busy loops delay the bulk of wake-ups while a host whose tail is already long barely doubles
 * its p99. System services alone need the p99 to rise (on a loaded host their jitter moves the
 * p90 all the time).
 *
 * <p>"Switched out by others" has two measures, and either counts: preemptions (a runnable task
 * of the container switched out for another's) and the waits its sampled wake-ups spent until
 * they displaced another's task (the article's prev_cgroup_id). A CPU-bound container shows the
 * first; one that sleeps between short bursts (a latency-sensitive server) is hardly ever
 * preempted, however long it queues behind a neighbor, and shows only the second. Who preempts
 * it more, others or its own tasks, is judged by preemptions when it has at least the floor of
 * them, else by whose tasks its waits ended behind.
 */
public final class NoisyNeighborRule implements Serializable {
    public final double ratio;
    public final long minLatencyUs;
    public final long minSwitchOuts;
    public final long minWaitUs;
    public final double alpha;
    /** Full windows learnt before anything is judged. */
    public final int minBaselineWindows = 5;

    /**
     * @param minLatencyUs the floor under which a latency (p99, p90 or mean) never counts as risen
     * @param minSwitchOuts the floor of switch-outs by a cause in one window, so scale it with the window
     * @param minWaitUs the floor of the sampled waits behind a cause summed over one window, so scale it
     *     with the window too
     */
    public NoisyNeighborRule(double ratio, long minLatencyUs, long minSwitchOuts, long minWaitUs, double alpha) {
        this.ratio = ratio;
        this.minLatencyUs = minLatencyUs;
        this.minSwitchOuts = minSwitchOuts;
        this.minWaitUs = minWaitUs;
        this.alpha = alpha;
    }

    public static NoisyNeighborRule defaults() {
        return new NoisyNeighborRule(2.0, 1_000, 100, 100_000, 0.2);
    }

    /** A container's normal: EWMAs of its latency and of switch-outs by cause per window. */
    public static class Baseline implements Serializable {
        public double meanUs;
        public double p90Us;
        public double p99Us;
        public double otherContainer;
        public double system;
        public double waitOtherUs;
        public double waitSystemUs;
        public long windows;
        /**
         * The end of the first window the container was seen in: a window that starts before it
         * may predate the container (its counts cover part of the window) and is not learnt.
         */
        public long firstWindowEndMillis = Long.MIN_VALUE;
    }

    public enum Verdict {
        NOISY_NEIGHBOR,
        SELF_THROTTLED,
        NORMAL
    }

    public Verdict judge(ContainerWindow w, Baseline b) {
        if (!judgeable(b) || w.samples == 0) {
            return Verdict.NORMAL;
        }
        boolean p99Rose = rose(w.p99Us, b.p99Us, minLatencyUs);
        boolean bulkRose = rose(w.p90Us, b.p90Us, minLatencyUs) || rose(w.meanUs, b.meanUs, minLatencyUs);
        if (!p99Rose && !bulkRose) {
            return Verdict.NORMAL;
        }
        boolean othersOutnumberOwn = w.byOthers() + w.sameContainer >= minSwitchOuts
                ? w.byOthers() > w.sameContainer
                : w.waitByOthersUs() > w.waitSameUs;
        boolean neighborContainer = rose(w.otherContainer, b.otherContainer, minSwitchOuts)
                || rose(w.waitOtherUs, b.waitOtherUs, minWaitUs);
        boolean systemServices =
                rose(w.system, b.system, minSwitchOuts) || rose(w.waitSystemUs, b.waitSystemUs, minWaitUs);
        if (othersOutnumberOwn && (neighborContainer || (systemServices && p99Rose))) {
            return Verdict.NOISY_NEIGHBOR;
        }
        return p99Rose ? Verdict.SELF_THROTTLED : Verdict.NORMAL;
    }

    /**
     * Whether a window may become part of the baseline: while it is being built, every full
     * window; after that only windows in which no signal rose, so a neighbor that ramps up over
     * several sliding windows does not raise the baseline ahead of itself.
     */
    public boolean calm(ContainerWindow w, Baseline b) {
        if (!judgeable(b)) {
            return true;
        }
        return !rose(w.p99Us, b.p99Us, minLatencyUs)
                && !rose(w.p90Us, b.p90Us, minLatencyUs)
                && !rose(w.meanUs, b.meanUs, minLatencyUs)
                && !rose(w.otherContainer, b.otherContainer, minSwitchOuts)
                && !rose(w.system, b.system, minSwitchOuts)
                && !rose(w.waitOtherUs, b.waitOtherUs, minWaitUs)
                && !rose(w.waitSystemUs, b.waitSystemUs, minWaitUs);
    }

    private boolean judgeable(Baseline b) {
        return b != null && b.windows >= minBaselineWindows;
    }

    /** Folds a window into the baseline; a window that may predate the container is only noted. */
    public Baseline learn(Baseline b, ContainerWindow w) {
        Baseline out = b == null ? new Baseline() : b;
        if (out.firstWindowEndMillis == Long.MIN_VALUE) {
            out.firstWindowEndMillis = w.windowEndMillis;
        }
        if (w.samples == 0 || w.windowStartMillis < out.firstWindowEndMillis) {
            return out;
        }
        boolean first = out.windows == 0;
        out.meanUs = ewma(first, out.meanUs, w.meanUs);
        out.p90Us = ewma(first, out.p90Us, w.p90Us);
        out.p99Us = ewma(first, out.p99Us, w.p99Us);
        out.otherContainer = ewma(first, out.otherContainer, w.otherContainer);
        out.system = ewma(first, out.system, w.system);
        out.waitOtherUs = ewma(first, out.waitOtherUs, w.waitOtherUs);
        out.waitSystemUs = ewma(first, out.waitSystemUs, w.waitSystemUs);
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
            case NOISY_NEIGHBOR -> String.format(
                    "run-queue p99 %d us, mean %d us (baseline %.0f us, %.0f us) while switched "
                            + "out %d times by other containers and %d by system services (baseline %.0f), %d by its own tasks;"
                            + " waited %d ms behind other containers and %d ms behind system services (baseline %.0f ms),"
                            + " %d ms behind its own tasks (sampled wake-ups)",
                    w.p99Us,
                    w.meanUs,
                    b.p99Us,
                    b.meanUs,
                    w.otherContainer,
                    w.system,
                    b.otherContainer + b.system,
                    w.sameContainer,
                    w.waitOtherUs / 1000,
                    w.waitSystemUs / 1000,
                    (b.waitOtherUs + b.waitSystemUs) / 1000,
                    w.waitSameUs / 1000);
            case SELF_THROTTLED -> String.format(
                    "run-queue p99 %d us (baseline %.0f us) but preempted mostly by its own "
                            + "tasks (%d vs %d by others): its own quota or load, not a neighbor",
                    w.p99Us, b.p99Us, w.sameContainer, w.byOthers());
            case NORMAL -> "back to normal: run-queue p99 " + w.p99Us + " us";
        };
    }
}
