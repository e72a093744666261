package io.tally.jobs.counter;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The counters of one task that went idle (rolled up, nothing pending), oldest first, and which of
 * them may leave the state: idle for {@code idleMs}, and with a checkpoint completed since they went
 * idle, so the rollup that made them idle has reached the store (the rollup sink flushes before a
 * checkpoint's barrier passes). Kept in memory only: after a restore the operator marks every
 * idle counter of the restored state again.
 */
final class IdleCounters {
    private final long idleMs;
    /** Counter key to when it went idle (processing time), in the order they went idle. */
    private final LinkedHashMap<String, Long> since = new LinkedHashMap<>();
    /** Checkpoint id to when its snapshot was taken, until the checkpoint completes (or a later one does). */
    private final TreeMap<Long, Long> snapshots = new TreeMap<>();
    /** Counters idle since before this had a checkpoint complete after it. */
    private long checkpointedBefore = Long.MIN_VALUE;

    IdleCounters(long idleMs) {
        if (idleMs <= 0) {
            throw new IllegalArgumentException("idleMs must be above 0");
        }
        this.idleMs = idleMs;
    }

    long idleMs() {
        return idleMs;
    }

    /** The counter is idle as of now (again, if it was before: its clock starts over). */
    void idle(String key, long nowMillis) {
        since.remove(key);
        since.put(key, nowMillis);
    }

    void snapshotTaken(long checkpointId, long nowMillis) {
        snapshots.put(checkpointId, nowMillis);
    }

    void checkpointCompleted(long checkpointId) {
        Long taken = snapshots.get(checkpointId);
        if (taken != null) {
            checkpointedBefore = Math.max(checkpointedBefore, taken);
        }
        snapshots.headMap(checkpointId, true).clear(); // an earlier one that never completes is subsumed
    }

    /** Whether what was idle at `sinceMillis` may leave the state now. */
    boolean settled(long sinceMillis, long nowMillis) {
        return sinceMillis < Math.min(nowMillis - idleMs, checkpointedBefore);
    }

    /** Takes out and returns the counters that may leave the state now. */
    List<String> due(long nowMillis) {
        List<String> due = new ArrayList<>();
        for (Iterator<Map.Entry<String, Long>> it = since.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Long> e = it.next();
            if (!settled(e.getValue(), nowMillis)) {
                break; // the rest went idle later
            }
            due.add(e.getKey());
            it.remove();
        }
        return due;
    }

    int size() {
        return since.size();
    }
}
