package io.tally.jobs.counter;

import io.tally.jobs.cassandra.EventRow;
import java.io.Serializable;

/**
 * What the store holds of a counter whose state {@link CounterRollupFunction} let go (idle, its
 * rollup written): the rollup to carry on from when the counter is touched again, and whether an
 * event is in the event log already (a replay after a restore can meet a rollup the store holds
 * that is newer than the checkpoint's, with the events it counted arriving again).
 */
public interface CounterRollupStore extends Serializable {
    /** The counter's last stored rollup, times in microseconds since the epoch. */
    record StoredRollup(long count, long rollupMicros, long lastWriteMicros, int repairs) {}

    /** Called once per task before the first read. */
    default void open() {}

    /** The counter's last rollup in the store, or null when it has none (a new counter). */
    StoredRollup rollupOf(String namespace, String counter);

    /** Whether the event log holds this very row (same event id and time, same item and value). */
    boolean holds(EventRow row);

    default void close() {}

    /** No store: a counter without state is a new one (unit tests, and the job when nothing is let go). */
    CounterRollupStore NONE = new CounterRollupStore() {
        @Override
        public StoredRollup rollupOf(String namespace, String counter) {
            return null;
        }

        @Override
        public boolean holds(EventRow row) {
            return false;
        }
    };
}
