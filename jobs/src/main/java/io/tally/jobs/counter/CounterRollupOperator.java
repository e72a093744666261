package io.tally.jobs.counter;

import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.runtime.state.KeyedStateBackend;
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
 */
public final class CounterRollupOperator extends KeyedProcessOperator<String, CounterMutation, RollupWrite> {
    private static final Logger LOG = LoggerFactory.getLogger(CounterRollupOperator.class);

    public CounterRollupOperator() {
        super(new CounterRollupFunction());
    }

    @Override
    public void open() throws Exception {
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
