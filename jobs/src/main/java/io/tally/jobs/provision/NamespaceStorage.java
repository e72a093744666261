package io.tally.jobs.provision;

import io.tally.namespace.NamespaceConfig;
import java.util.function.ToLongFunction;

/**
 * What provisioning does to the stores, one namespace at a time; every call is idempotent, so a
 * call that failed is simply made again on the next tick. {@link StoreNamespaceStorage} is the
 * real one (Cassandra and Elasticsearch); a MiniCluster test passes one that records the calls.
 */
public interface NamespaceStorage extends AutoCloseable {
    /**
     * A created or changed namespace gets everything its config needs to take writes.
     *
     * @param createdMicros when the namespace was created (0: unknown): its tables' ids derive from it
     */
    void provision(NamespaceConfig ns, long createdMicros, long nowMicros) throws Exception;

    /** A deleted namespace's data goes. */
    void retire(String namespace) throws Exception;

    /** One pass of the slice lifecycle over every live namespace (createdMicros: as for provision). */
    void lifecycle(Iterable<NamespaceConfig> namespaces, ToLongFunction<String> createdMicros, long nowMicros)
            throws Exception;

    @Override
    void close();
}
