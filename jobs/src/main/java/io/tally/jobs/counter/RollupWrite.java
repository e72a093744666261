package io.tally.jobs.counter;

/**
 * One write to a namespace's counter_rollups table. ROLLUP sets the count at rollup time T and
 * last_write_ts to the newest accepted event's time (USING TIMESTAMP T, so an older rollup never
 * wins). A positive ttlSeconds makes the row expire (BEST_EFFORT).
 * LIVE is not a table write: it is what the gateways' counter view shows of an ACCURATE counter.
 */
public class RollupWrite {
    public enum Kind {
        ROLLUP,
        /** An ACCURATE counter's live total (rollup plus pending accepted events): for the view only, never stored. */
        LIVE
    }

    public Kind kind;
    public String namespace;
    public String counter;
    public long count;
    public long timeMicros;
    public int ttlSeconds;
    /** With a ROLLUP: the newest accepted event's time (0 when unknown), for the counter view. */
    public long lastWriteMicros;
    /** Of an ACCURATE counter (its ROLLUPs are not published; its LIVE totals are). */
    public boolean accurate;
    /**
     * The write time of a stored rollup (USING TIMESTAMP); 0: its rollup time. A repaired rollup
     * is written again a little above its rollup time, so it wins over its first write.
     */
    public long writeMicros;
    /** When the counter's namespace was created (0: unknown), for the view to tell a re-created namespace's apart. */
    public long namespaceCreatedMicros;

    public RollupWrite() {}

    /** The USING TIMESTAMP of its row. */
    public long writeTimestampMicros() {
        return writeMicros > 0 ? writeMicros : timeMicros;
    }

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

    /** An ACCURATE counter's total now: count at the rollup rollupMicros plus every pending accepted event. */
    static RollupWrite live(String namespace, String counter, long total, long rollupMicros, long lastWriteMicros) {
        RollupWrite w = rollup(namespace, counter, total, rollupMicros, 0);
        w.kind = Kind.LIVE;
        w.lastWriteMicros = lastWriteMicros;
        return w;
    }

    /** Written to counter_rollups (ROLLUP); LIVE is only published. */
    public boolean stored() {
        return kind != Kind.LIVE;
    }

    /**
     * Published to tally.counter.rollups: an EVENTUAL or BEST_EFFORT counter's rollups, an ACCURATE
     * counter's live totals (its bare rollup would show the view less than the counter holds).
     */
    public boolean viewed() {
        return kind == Kind.LIVE || (kind == Kind.ROLLUP && !accurate);
    }

    /** The rollup as published on tally.counter.rollups (key namespace/counter) for the gateways' view. */
    public tally.v1.CounterRollup toAvro() {
        return new tally.v1.CounterRollup(
                namespace,
                counter,
                count,
                io.tally.model.Micros.toInstant(timeMicros),
                io.tally.model.Micros.toInstant(lastWriteMicros),
                kind == Kind.LIVE,
                namespaceCreatedMicros);
    }
}
