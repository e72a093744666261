package io.tally.jobs.counter;

/**
 * One write to a namespace's counter_rollups table. ROLLUP sets the count at rollup time T
 * (USING TIMESTAMP T, so an older rollup never wins); LAST_WRITE moves last_write_ts
 * (USING TIMESTAMP of the event). A positive ttlSeconds makes the row expire (BEST_EFFORT).
 */
public class RollupWrite {
    public enum Kind {
        ROLLUP,
        LAST_WRITE
    }

    public Kind kind;
    public String namespace;
    public String counter;
    public long count;
    public long timeMicros;
    public int ttlSeconds;
    /** With a ROLLUP: the newest accepted event's time (0 when unknown), for the counter view. */
    public long lastWriteMicros;

    public RollupWrite() {}

    static RollupWrite rollup(String namespace, String counter, long count, long rollupMicros, int ttlSeconds) {
        RollupWrite w = new RollupWrite();
        w.kind = Kind.ROLLUP;
        w.namespace = namespace;
        w.counter = counter;
        w.count = count;
        w.timeMicros = rollupMicros;
        w.ttlSeconds = ttlSeconds;
        return w;
    }

    /** The rollup as published on tally.counter.rollups (key namespace/counter) for the gateways' view. */
    public tally.v1.CounterRollup toAvro() {
        return new tally.v1.CounterRollup(
                namespace,
                counter,
                count,
                io.tally.model.Micros.toInstant(timeMicros),
                io.tally.model.Micros.toInstant(lastWriteMicros));
    }

    static RollupWrite lastWrite(String namespace, String counter, long eventMicros) {
        RollupWrite w = new RollupWrite();
        w.kind = Kind.LAST_WRITE;
        w.namespace = namespace;
        w.counter = counter;
        w.timeMicros = eventMicros;
        return w;
    }
}
