package io.tally.jobs.provision;

import io.tally.jobs.control.ControlPlane;
import io.tally.jobs.control.LiveNamespaces;
import io.tally.namespace.NamespaceChange;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.co.BroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.function.SerializableSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the storage of each namespace match the control plane (parallelism 1, by design: one
 * actor for DDL): a created or changed namespace is provisioned within a second, a deleted one
 * retired, and every tick runs the slice lifecycle (see {@link NamespaceStorage} for what each
 * means, {@link StoreNamespaceStorage} for the stores). Work that fails (Cassandra or
 * Elasticsearch down) is retried on the next tick.
 */
public class NamespaceProvisioner extends BroadcastProcessFunction<Long, NamespaceChange, String> {
    private static final Logger LOG = LoggerFactory.getLogger(NamespaceProvisioner.class);
    private final SerializableSupplier<NamespaceStorage> storageFactory;
    private transient NamespaceStorage storage;
    private transient LiveNamespaces namespaces;
    /** Changes not carried out yet (in order), retried each tick; provisioning is idempotent. */
    private transient Set<NamespaceChange> todo;
    /**
     * Whether the deletes pending in the broadcast state (a deleted name keeps its tombstone
     * there until its storage is retired) were queued since this instance opened: a delete that
     * a checkpoint caught before it was carried out is carried out after a restore.
     */
    private transient boolean pendingDeletesQueued;
    /**
     * Changes are started for at most this long a tick, the rest wait for the next: the work
     * runs on the operator's thread, so a checkpoint barrier (a savepoint for an upgrade) waits
     * behind it, and a replay's backlog must not hold one for minutes.
     */
    private static final long TICK_BUDGET_NANOS = 2_000_000_000L;

    public NamespaceProvisioner(SerializableSupplier<NamespaceStorage> storage) {
        this.storageFactory = storage;
    }

    @Override
    public void open(OpenContext ctx) {
        storage = storageFactory.get();
        namespaces = new LiveNamespaces();
        todo = new LinkedHashSet<>();
    }

    @Override
    public void processBroadcastElement(NamespaceChange change, Context ctx, Collector<String> out) throws Exception {
        if (change.tickOnly()) {
            // carried out once a second, not per change: a deployment replays the topic from its
            // start, and a burst of a name's changes (a test namespace created, changed, deleted)
            // then costs its latest change only, not a keyspace created and dropped for nothing
            var state = ctx.getBroadcastState(ControlPlane.NAMESPACES);
            queuePendingDeletes(state.immutableEntries());
            for (NamespaceChange retired : carryOut(out)) {
                if (retired.equals(state.get(retired.name))) {
                    state.remove(retired.name); // its storage is gone: the tombstone has done its work
                }
            }
            return;
        }
        ctx.getBroadcastState(ControlPlane.NAMESPACES).put(change.name, change);
        // Only the latest change of a name matters, except a delete that a create follows: that
        // is a new namespace of the same name, and the old one's data goes first (else the new one
        // would inherit the old keyspace's rows).
        todo.removeIf(c -> c.name.equals(change.name) && !(c.deleted && !change.deleted));
        todo.add(change);
    }

    @Override
    public void processElement(Long tick, ReadOnlyContext ctx, Collector<String> out) throws Exception {
        queuePendingDeletes(ctx.getBroadcastState(ControlPlane.NAMESPACES).immutableEntries());
        carryOut(out);
        // After a restore the state holds every namespace: the first ticks provision them again (idempotent).
        try {
            LiveNamespaces live = namespaces.over(ctx.getBroadcastState(ControlPlane.NAMESPACES));
            storage.lifecycle(live.all().values(), live::createdMicros, System.currentTimeMillis() * 1000);
        } catch (Exception e) {
            LOG.warn("slice lifecycle pass failed; retrying on the next tick", e);
        }
    }

    private void queuePendingDeletes(Iterable<Map.Entry<String, NamespaceChange>> state) {
        if (pendingDeletesQueued) {
            return;
        }
        pendingDeletesQueued = true;
        for (Map.Entry<String, NamespaceChange> e : state) {
            NamespaceChange c = e.getValue();
            if (c.deleted && todo.stream().noneMatch(t -> t.name.equals(c.name))) {
                todo.add(c);
            }
        }
    }

    /** Carries out what it can within the tick's budget; the deletes it carried out. */
    private List<NamespaceChange> carryOut(Collector<String> out) {
        List<NamespaceChange> retired = new ArrayList<>();
        long deadline = System.nanoTime() + TICK_BUDGET_NANOS;
        Set<String> waiting = new java.util.HashSet<>();
        for (var it = todo.iterator(); it.hasNext() && System.nanoTime() < deadline; ) {
            NamespaceChange c = it.next();
            if (waiting.contains(c.name)) {
                continue; // an earlier change of the name failed: a create never runs before its delete
            }
            try {
                if (c.deleted) {
                    storage.retire(c.name);
                } else {
                    storage.provision(c.config(), c.createdMicros, System.currentTimeMillis() * 1000);
                }
                it.remove();
                if (c.deleted) {
                    retired.add(c);
                }
                out.collect((c.deleted ? "retired " : "provisioned ") + c.name + " v" + c.version);
                LOG.info("{} {} v{}", c.deleted ? "retired" : "provisioned", c.name, c.version);
            } catch (Exception e) {
                LOG.warn("provisioning {} failed; retrying on the next tick: {}", c, e.toString());
                waiting.add(c.name); // only this name waits, its changes in order
            }
        }
        return retired;
    }

    @Override
    public void close() {
        if (storage != null) {
            storage.close();
        }
    }
}
