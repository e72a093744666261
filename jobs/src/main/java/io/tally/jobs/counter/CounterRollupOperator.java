package io.tally.jobs.counter;

import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link CounterRollupFunction}'s operator. When the job starts it drops the rollup histories an
 * earlier release kept without an expiry: they were four fifths of the state, and a counter that
 * stays quiet would never be touched to move or drop its own. What it costs is a RECOUNT, in
 * flight across the upgrade, that names a rollup before a counter's current one: that is refused
 * as RECOUNT_STALE (nothing changes; the message says to recount again). It also removes the
 * empty maps of ids and pending mutations that rollups of releases up to 2026-11-26 left behind
 * for every counter (written into each checkpoint with the counter's key).
 *
 * <p>It lets idle counters go ({@link IdleCounters}): every few seconds the counters idle long
 * enough, with a checkpoint since, leave the state. A restored state's idle counters are not
 * known one by one; once the idle time has passed after the restore (and a checkpoint), one pass
 * over the restored counters lets those go that are still idle. Each counter let go is added to
 * {@link LetGoCounters}, kept in the operator's state: a counter without state is read back from the
 * store only when that filter may name it, so new counters cost no read. The filter outlives the
 * setting: with the idle time set back to 0, counters let go earlier are still read back.
 */
public final class CounterRollupOperator extends KeyedProcessOperator<String, CounterMutation, RollupWrite> {
    private static final Logger LOG = LoggerFactory.getLogger(CounterRollupOperator.class);

    private final long idleMs;
    private transient IdleCounters idle;
    /** When the task started with a restored state, until its idle counters were let go (0: done). */
    private transient long restoredAtMillis;

    private transient LetGoCounters.Kept letGo;

    /** An operator whose counters never leave the state. */
    public CounterRollupOperator() {
        this(CounterRollupStore.NONE, 0);
    }

    /**
     * @param store where a counter that was let go is read back from
     * @param idleMs how long a counter stays idle before it leaves the state (0: never)
     */
    public CounterRollupOperator(CounterRollupStore store, long idleMs) {
        super(new CounterRollupFunction(store));
        this.idleMs = idleMs;
    }

    private CounterRollupFunction function() {
        return (CounterRollupFunction) userFunction;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        letGo = LetGoCounters.Kept.restore(context.getOperatorStateStore(), "let-go-counters");
        function().readBackOnly(letGo.filter);
        if (!letGo.filter.isEmpty()) {
            LOG.info(
                    "counters let go: a filter with {}% of its bits set (a new counter is read for nothing at"
                            + " about that to the fifth)",
                    String.format("%.2f", 100 * letGo.filter.fill()));
        }
    }

    @Override
    public void open() throws Exception {
        if (idleMs > 0) {
            idle = new IdleCounters(idleMs);
            function().reportIdleTo(idle);
        }
        super.open();
        int dropped = dropUntimedHistory(getKeyedStateBackend());
        if (dropped > 0) {
            LOG.info("dropped the untimed rollup history of {} counters (kept by an earlier release)", dropped);
        }
        int empty = dropEmpty(getKeyedStateBackend(), CounterRollupFunction.idsUntilRollup())
                + dropEmpty(getKeyedStateBackend(), CounterRollupFunction.pendingMutations());
        if (empty > 0) {
            LOG.info("removed {} empty maps of ids or pending mutations (left by an earlier release)", empty);
        }
        if (idle != null) {
            long now = getProcessingTimeService().getCurrentProcessingTime();
            restoredAtMillis = now;
            getProcessingTimeService().registerTimer(now + sweepMs(), this::sweep);
        }
    }

    /** How often idle counters are looked for: a tenth of the idle time, from 1 s to 1 min. */
    long sweepMs() {
        return Math.max(1_000, Math.min(60_000, idleMs / 10));
    }

    /** Lets go the counters idle long enough (in the task's thread, like the records and timers). */
    private void sweep(long now) throws Exception {
        int let = 0;
        for (String key : idle.due(now)) {
            if (letGo(key)) {
                let++;
            }
        }
        if (restoredAtMillis != 0 && idle.settled(restoredAtMillis, now)) {
            let += letGoIdleRestored();
            restoredAtMillis = 0;
        }
        if (let > 0) {
            LOG.debug("let {} idle counters go", let);
        }
        getProcessingTimeService().registerTimer(now + sweepMs(), this::sweep);
    }

    /** One pass over every counter in the state: those idle leave it; how many did. */
    private int letGoIdleRestored() throws Exception {
        KeyedStateBackend<String> backend = getKeyedStateBackend();
        List<String> keys = new java.util.ArrayList<>();
        for (String state : List.of(CounterRollupFunction.ROLLUP_STATE, CounterRollupFunction.LEGACY_ROLLUP_STATE)) {
            try (Stream<String> s = backend.getKeys(state, VoidNamespace.INSTANCE)) {
                s.forEach(keys::add); // collected first: the heap backend's key stream must not see its map change
            }
        }
        int let = 0;
        for (String key : keys) {
            if (letGo(key)) {
                let++;
            }
        }
        LOG.info("let {} of the {} restored counters go (idle for {} ms)", let, keys.size(), idleMs);
        return let;
    }

    /** Whether the counter may have been let go (tests). */
    boolean mayHaveLetGo(String key) {
        return letGo.filter.mightContain(key);
    }

    /** Lets the counter go if it is idle, and remembers that it may have been; whether it was. */
    private boolean letGo(String key) throws Exception {
        setCurrentKey(key);
        if (!function().letGoIfIdle()) {
            return false;
        }
        letGo.filter.add(key);
        return true;
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        letGo.snapshot();
        if (idle != null) {
            idle.snapshotTaken(
                    context.getCheckpointId(), getProcessingTimeService().getCurrentProcessingTime());
        }
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        if (idle != null) {
            idle.checkpointCompleted(checkpointId);
        }
    }

    /** Removes the map of every counter whose map is empty; how many there were. */
    static <K, V> int dropEmpty(KeyedStateBackend<String> backend, MapStateDescriptor<K, V> descriptor)
            throws Exception {
        MapState<K, V> state =
                backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, descriptor);
        List<String> keys;
        try (Stream<String> s = backend.getKeys(descriptor.getName(), VoidNamespace.INSTANCE)) {
            keys = s.toList();
        }
        int dropped = 0;
        for (String key : keys) {
            backend.setCurrentKey(key);
            if (state.isEmpty()) {
                state.clear();
                dropped++;
            }
        }
        return dropped;
    }

    /** Clears the untimed history of every counter; how many had one. */
    static int dropUntimedHistory(KeyedStateBackend<String> backend) throws Exception {
        ValueState<long[]> untimed = backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, CounterRollupFunction.untimedHistory());
        List<String> keys; // collected first: the heap backend's key stream must not see its map change
        try (Stream<String> s =
                backend.getKeys(CounterRollupFunction.untimedHistory().getName(), VoidNamespace.INSTANCE)) {
            keys = s.toList();
        }
        for (String key : keys) {
            backend.setCurrentKey(key);
            untimed.clear();
        }
        return keys.size();
    }
}
