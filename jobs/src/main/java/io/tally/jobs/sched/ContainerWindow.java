package io.tally.jobs.sched;

/** A container's summary over one sliding window: run-queue percentiles and switch-outs by cause. */
public class ContainerWindow {
    public String host;
    public String container;
    public long windowStartMillis;
    public long windowEndMillis;
    public long samples;
    /** Mean run-queue wait: how often AND how long wake-ups waited, steadier than a percentile on a busy host. */
    public long meanUs;

    public long p50Us;
    public long p90Us;
    public long p99Us;
    public long sameContainer;
    public long otherContainer;
    public long system;
    /**
     * The sampled wake-ups' waits summed by who held the CPU when each ended (the task the waiter
     * displaced): a container that sleeps between short bursts is hardly ever preempted, so its
     * switch-outs barely move while it queues behind a neighbor; these do.
     */
    public long waitSameUs;

    public long waitOtherUs;
    public long waitSystemUs;

    public ContainerWindow() {}

    public String key() {
        return host + "/" + container;
    }

    /** Switch-outs caused by someone else: the noisy-neighbor side of the rule. */
    public long byOthers() {
        return otherContainer + system;
    }

    /** Waits that ended behind someone else's task. */
    public long waitByOthersUs() {
        return waitOtherUs + waitSystemUs;
    }
}
