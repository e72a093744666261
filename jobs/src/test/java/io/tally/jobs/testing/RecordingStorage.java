package io.tally.jobs.testing;

import io.tally.jobs.provision.NamespaceStorage;
import io.tally.jobs.provision.Provisioning;
import io.tally.namespace.NamespaceConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;

/**
 * A MiniCluster job's stores as the provisioner sees them: each call recorded, per name, as
 * "provision ns", "retire ns" or "lifecycle n" (MiniCluster tasks share the JVM).
 */
public final class RecordingStorage implements NamespaceStorage {
    static final Map<String, List<String>> CALLS = new ConcurrentHashMap<>();
    private final String name;

    private RecordingStorage(String name) {
        this.name = name;
    }

    /** A provisioning branch of a few fast ticks (so the job ends) recording under name. */
    public static Provisioning branch(String name) {
        CALLS.put(name, Collections.synchronizedList(new ArrayList<>()));
        return new Provisioning(() -> new RecordingStorage(name), 100, 20);
    }

    public static List<String> calls(String name) {
        return CALLS.get(name);
    }

    @Override
    public void provision(NamespaceConfig ns, long createdMicros, long nowMicros) {
        CALLS.get(name).add("provision " + ns.name());
    }

    @Override
    public void retire(String namespace) {
        CALLS.get(name).add("retire " + namespace);
    }

    @Override
    public void lifecycle(Iterable<NamespaceConfig> namespaces, ToLongFunction<String> createdMicros, long nowMicros) {
        int n = 0;
        for (NamespaceConfig ignored : namespaces) {
            n++;
        }
        CALLS.get(name).add("lifecycle " + n);
    }

    @Override
    public void close() {}
}
