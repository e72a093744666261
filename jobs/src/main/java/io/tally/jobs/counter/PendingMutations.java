package io.tally.jobs.counter;

/** The accepted mutations of one counter at one event time, waiting for their rollup (a Flink POJO). */
public class PendingMutations {
    /** The sum of the ADDs at this time. */
    public long delta;
    /** A CLEAR at this time (it drops everything at or before it, whatever the order). */
    public boolean cleared;

    public PendingMutations() {}

    PendingMutations(long delta, boolean cleared) {
        this.delta = delta;
        this.cleared = cleared;
    }

    /** The layout up to 2026-11: long[2] {delta, cleared ? 1 : 0}. */
    static PendingMutations fromSlots(long[] slot) {
        return new PendingMutations(slot[0], slot[1] == 1);
    }
}
