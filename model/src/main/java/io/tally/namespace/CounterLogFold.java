package io.tally.namespace;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * {@link CounterFold} over a slice of the counter event log read as a table scan (rows of many
 * counters, in no time order), without holding the rows: a first pass learns each counter's
 * newest CLEAR and the sum of its ADDs; only when some counter had a CLEAR does a second pass
 * sum that counter's ADDs after it. The result equals {@code CounterFold.fold(base, slice)} (up to
 * where a sum saturates at the long bounds: the sum saturates once, not step by step).
 */
public final class CounterLogFold {
    private static final class Sums {
        boolean cleared;
        long lastClearMicros = Long.MIN_VALUE;
        long all;
        long afterClear;
    }

    private final Map<String, Sums> counters = new HashMap<>();

    /** The first pass: every mutation of the slice. */
    public void first(String counter, CounterFold.Mutation m) {
        Sums s = counters.computeIfAbsent(counter, c -> new Sums());
        if (m.clear()) {
            s.cleared = true;
            s.lastClearMicros = Math.max(s.lastClearMicros, m.eventTimeMicros());
        } else {
            s.all = CounterFold.add(s.all, m.delta());
        }
    }

    /** Whether a second pass is needed: some counter was cleared in the slice. */
    public boolean needsSecondPass() {
        return counters.values().stream().anyMatch(s -> s.cleared);
    }

    /** The second pass: every mutation of the slice again (only a cleared counter's ADDs after its CLEAR count). */
    public void second(String counter, CounterFold.Mutation m) {
        Sums s = counters.get(counter);
        if (s != null && s.cleared && !m.clear() && m.eventTimeMicros() > s.lastClearMicros) {
            s.afterClear = CounterFold.add(s.afterClear, m.delta());
        }
    }

    /** The counters the slice holds mutations of. */
    public Set<String> counters() {
        return counters.keySet();
    }

    /** The counter's count after the slice, given its count before it. */
    public long foldOnto(String counter, long base) {
        Sums s = counters.get(counter);
        if (s == null) {
            return base;
        }
        return s.cleared ? s.afterClear : CounterFold.add(base, s.all);
    }
}
