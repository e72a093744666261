package io.tally.jobs.provision;

import io.tally.jobs.cassandra.CassandraEndpoint;
import io.tally.jobs.cassandra.CounterTables;
import io.tally.jobs.elasticsearch.ElasticsearchAdmin;
import io.tally.jobs.elasticsearch.ElasticsearchEndpoint;
import io.tally.jobs.elasticsearch.IndexTemplates;
import io.tally.model.elasticsearch.IndexNames;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.TimeSlicePlanner;
import java.util.function.ToLongFunction;

/**
 * Namespaces in Cassandra and Elasticsearch:
 * <ul>
 *   <li>provision: for an indexed timeseries namespace its index template, its current slice
 *       index behind the alias and new field_mapping fields on its existing indices (first:
 *       Cassandra DDL takes seconds); its keyspace, its current and next slices (tables and
 *       catalogue rows); a counter namespace's counter_rollups table;</li>
 *   <li>retire: keyspace dropped, catalogue rows DELETED, indices and index template deleted;</li>
 *   <li>lifecycle: the {@link SliceLifecycle} pass.</li>
 * </ul>
 */
public final class StoreNamespaceStorage implements NamespaceStorage {
    private final SliceLifecycle lifecycle;
    private final ElasticsearchAdmin es;

    public StoreNamespaceStorage(CassandraEndpoint cassandra, ElasticsearchEndpoint elasticsearch) {
        this.es = new ElasticsearchAdmin(elasticsearch);
        this.lifecycle = new SliceLifecycle(cassandra.session(), cassandra.replication(), es);
    }

    @Override
    public void provision(NamespaceConfig ns, long createdMicros, long nowMicros) throws Exception {
        if (ns.kind() == NamespaceConfig.Kind.TIMESERIES && ns.index().enabled()) {
            IndexTemplates.put(es, ns);
            String current = new TimeSlicePlanner(ns).sliceOf(nowMicros).indexName();
            es.create("/" + current, "{}"); // the template gives it the mapping and the alias
        }
        lifecycle.ensureAhead(ns, createdMicros, nowMicros);
        if (ns.isCounter()) {
            CounterTables.create(lifecycle.session(), lifecycle.replication(), ns.name(), createdMicros);
        }
    }

    @Override
    public void retire(String name) throws Exception {
        lifecycle.retire(name);
        es.delete("/" + IndexNames.pattern(name));
        es.delete("/_index_template/" + IndexNames.template(name));
    }

    @Override
    public void lifecycle(Iterable<NamespaceConfig> namespaces, ToLongFunction<String> createdMicros, long nowMicros)
            throws Exception {
        lifecycle.run(namespaces, createdMicros, nowMicros);
    }

    @Override
    public void close() {
        lifecycle.close();
    }
}
