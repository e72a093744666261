package io.tally.jobs.timeseries;

import io.tally.jobs.cassandra.AsyncCqlWrites;
import io.tally.jobs.control.ControlPlane;
import io.tally.jobs.control.LiveNamespaces;
import io.tally.jobs.counter.CassandraRollupSink;
import io.tally.namespace.NamespaceChange;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.TimeSlicePlanner;
import java.util.LinkedHashSet;
import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.co.BroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the storage of each namespace match the control plane (parallelism 1):
 * <ul>
 *   <li>a created or changed namespace gets, within a second, its keyspace, its current and next slices
 *       (tables and catalogue rows), its counter_rollups table (counters), and for an indexed
 *       timeseries namespace its index template, its current slice index behind the alias, and
 *       any new field_mapping fields added to the mappings of its existing indices;</li>
 *   <li>a deleted namespace is retired: its keyspace is dropped, its catalogue rows become
 *       DELETED, its indices and index template are deleted;</li>
 *   <li>every tick runs the {@link SliceLifecycle} (slices ahead, close, drop by retention).</li>
 * </ul>
 * Work that fails (Cassandra or Elasticsearch down) is retried on the next tick.
 */
public class NamespaceProvisioner extends BroadcastProcessFunction<Long, NamespaceChange, String> {
    private static final Logger LOG = LoggerFactory.getLogger(NamespaceProvisioner.class);
    private final String cassandraHost;
    private final int cassandraPort;
    private final String elasticsearch;
    private transient SliceLifecycle lifecycle;
    private transient ElasticsearchAdmin es;
    private transient LiveNamespaces namespaces;
    /** Changes not carried out yet (in order), retried each tick; provisioning is idempotent. */
    private transient Set<NamespaceChange> todo;
    /**
     * Changes are started for at most this long a tick, the rest wait for the next: the work
     * runs on the operator's thread, so a checkpoint barrier (a savepoint for an upgrade) waits
     * behind it, and a replay's backlog must not hold one for minutes.
     */
    private static final long TICK_BUDGET_NANOS = 2_000_000_000L;

    public NamespaceProvisioner(String cassandraHost, int cassandraPort, String elasticsearch) {
        this.cassandraHost = cassandraHost;
        this.cassandraPort = cassandraPort;
        this.elasticsearch = elasticsearch;
    }

    @Override
    public void open(OpenContext ctx) {
        es = new ElasticsearchAdmin(elasticsearch);
        lifecycle = new SliceLifecycle(AsyncCqlWrites.session(cassandraHost, cassandraPort), es);
        namespaces = new LiveNamespaces();
        todo = new LinkedHashSet<>();
    }

    @Override
    public void processBroadcastElement(NamespaceChange change, Context ctx, Collector<String> out) throws Exception {
        if (change.tickOnly()) {
            // carried out once a second, not per change: a deployment replays the topic from its
            // start, and a burst of a name's changes (a test namespace created, changed, deleted)
            // then costs its latest change only, not a keyspace created and dropped for nothing
            carryOut(out);
            return;
        }
        ctx.getBroadcastState(ControlPlane.NAMESPACES).put(change.name, change);
        todo.removeIf(c -> c.name.equals(change.name)); // only the latest change of a name matters
        todo.add(change);
    }

    @Override
    public void processElement(Long tick, ReadOnlyContext ctx, Collector<String> out) throws Exception {
        carryOut(out);
        // After a restore the state holds every namespace: the first ticks provision them again (idempotent).
        try {
            lifecycle.run(namespaces.over(ctx.getBroadcastState(ControlPlane.NAMESPACES)).all().values(), System.currentTimeMillis() * 1000);
        } catch (Exception e) {
            LOG.warn("slice lifecycle pass failed; retrying on the next tick", e);
        }
    }

    private void carryOut(Collector<String> out) {
        long deadline = System.nanoTime() + TICK_BUDGET_NANOS;
        for (var it = todo.iterator(); it.hasNext() && System.nanoTime() < deadline; ) {
            NamespaceChange c = it.next();
            try {
                if (c.deleted) {
                    retire(c.name);
                } else {
                    provision(c.config());
                }
                it.remove();
                out.collect((c.deleted ? "retired " : "provisioned ") + c.name + " v" + c.version);
                LOG.info("{} {} v{}", c.deleted ? "retired" : "provisioned", c.name, c.version);
            } catch (Exception e) {
                LOG.warn("provisioning {} failed; retrying on the next tick: {}", c, e.toString());
                // only this name waits (todo holds one change per name, so order per name is kept)
            }
        }
    }

    private void provision(NamespaceConfig ns) throws Exception {
        long now = System.currentTimeMillis() * 1000;
        if (ns.kind() == NamespaceConfig.Kind.TIMESERIES && ns.index().enabled()) { // first: Cassandra DDL takes seconds
            IndexDocs.putTemplateAndMapping(es, ns);
            String current = new TimeSlicePlanner(ns).sliceOf(now).indexName();
            es.create("/" + current, "{}"); // the template gives it the mapping and the alias
        }
        lifecycle.ensureAhead(ns, now);
        if (ns.isCounter()) {
            CassandraRollupSink.createTable(lifecycle.session(), ns.name());
        }
    }

    private void retire(String name) throws Exception {
        lifecycle.retire(name);
        es.delete("/tally-" + name + "-*");
        es.delete("/_index_template/tally-" + name);
    }

    @Override
    public void close() {
        if (lifecycle != null) {
            lifecycle.close();
        }
    }
}
