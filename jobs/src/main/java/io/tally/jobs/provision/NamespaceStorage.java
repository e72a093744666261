package io.tally.jobs.provision;

import io.tally.namespace.NamespaceConfig;

/**
 * What provisioning does to the stores, one namespace at a time; every call is idempotent, so a
 * call that failed is simply made again on the next tick. {@link StoreNamespaceStorage} is the
 * real one (Cassandra and Elasticsearch); a MiniCluster test passes one that records the calls.
 */
public interface NamespaceStorage extends AutoCloseable {
    /** A created or changed namespace gets everything its config needs to take writes. */
    void provision(NamespaceConfig ns, long nowMicros) throws Exception;

    /** A deleted namespace's data goes. */
    void retire(String namespace) throws Exception;

    /** One pass of the slice lifecycle over every live namespace. */
    void lifecycle(Iterable<NamespaceConfig> namespaces, long nowMicros) throws Exception;

    @Override
    void close();
}
