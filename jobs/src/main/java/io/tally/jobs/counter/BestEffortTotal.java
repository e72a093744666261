package io.tally.jobs.counter;

/** What {@link BestEffortAggregator} keeps per counter (a Flink POJO). */
public class BestEffortTotal {
    /** The processing-time total since the last CLEAR. */
    public long total;
    /** When the pending flush fires (processing time, ms; 0: none pending). */
    public long flushAtMillis;
    /** The namespace's retention.delete_after: the TTL of the rollup row it writes. */
    public long deleteAfterSeconds;
    /** When its namespace was created (0: unknown): a re-created namespace's counter starts from zero. */
    public long namespaceCreatedMicros;

    public BestEffortTotal() {}

    /** The layout up to 2026-11: long[] {total, pending flush time, delete_after seconds}. */
    static BestEffortTotal fromSlots(long[] t) {
        BestEffortTotal b = new BestEffortTotal();
        b.total = t[0];
        b.flushAtMillis = t.length > 1 ? t[1] : 0;
        b.deleteAfterSeconds = t.length > 2 ? t[2] : 0;
        return b;
    }
}
