package io.tally.jobs.counter;

/**
 * What {@link CounterRollupFunction} keeps per counter, written into checkpoints by {@link
 * CounterRollupStateSerializer} (a field added here needs a new format version there; its test
 * fails otherwise). Times are microseconds since the epoch unless named millis.
 */
public class CounterRollupState {
    /** The count at the last rollup. */
    public long count;
    /** The last rollup time T: every accepted event before it is counted, none after. */
    public long rollupMicros;
    /** The newest event time seen, and the one last written to counter_rollups.last_write_ts. */
    public long lastWriteMicros;

    /** Unused since last_write_ts is written with each rollup; kept so savepoints of the earlier layout restore. */
    public long lastWriteStoredMicros;
    /** The event-time timer set for the next rollup (0: none). */
    public long timerMillis;
    /** The namespace's config at the counter's last mutation, for its timers. */
    public long acceptLimitMs;

    public long coalesceMs;
    public long clockSkewMs;
    /** An ACCURATE counter: its live total goes to the view after each change. */
    public boolean accurate;
    /** The processing-time timer of the next live total (0: none set, nothing changed since the last). */
    public long liveTimerMillis;
    /** When the last live total went out (processing time): a change after a quiet interval goes at once. */
    public long lastLiveMillis;
    /** How many RECOUNTs repaired the current rollup (each write of it goes a microsecond higher). */
    public int repairs;
    /**
     * When the counter's namespace was created (0: unknown, state of an earlier release): a
     * mutation of a namespace created later (deleted and created again) starts the counter anew.
     */
    public long namespaceCreatedMicros;

    public CounterRollupState() {}

    /**
     * A counter's state at a rollup the job did not make itself (read back from the store, or a
     * RECOUNT's count of a counter it holds nothing of), with the config of the mutation at hand.
     */
    static CounterRollupState at(CounterMutation m, long count, long rollupMicros) {
        CounterRollupState s = new CounterRollupState();
        s.count = count;
        s.rollupMicros = rollupMicros;
        s.acceptLimitMs = m.acceptLimitMs;
        s.coalesceMs = m.coalesceMs;
        s.clockSkewMs = m.clockSkewMs;
        s.accurate = m.accurate;
        s.namespaceCreatedMicros = m.namespaceCreatedMicros;
        return s;
    }

    /**
     * The state as the job kept it up to 2026-11 (ValueState of a long[8]: count, rollup time,
     * last write, last write stored, timer, accept, coalesce, skew), read once per counter after
     * an upgrade from such a savepoint.
     */
    static CounterRollupState fromSlots(long[] r) {
        if (r.length < 8) {
            throw new IllegalStateException("counter state of " + r.length
                    + " slots predates the control plane; restore it with a release before 2026-11 first");
        }
        CounterRollupState s = new CounterRollupState();
        s.count = r[0];
        s.rollupMicros = r[1];
        s.lastWriteMicros = r[2];
        s.lastWriteStoredMicros = r[3];
        s.timerMillis = r[4];
        s.acceptLimitMs = r[5];
        s.coalesceMs = r[6];
        s.clockSkewMs = r[7];
        return s;
    }
}
