package io.tally.jobs.testing;

import io.tally.serde.RegistryException;
import io.tally.serde.SchemaRegistryClient;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;

/** An in-JVM registry for MiniCluster tests of the job's own logic (the real one is in the e2e test). */
public final class StaticRegistry implements SchemaRegistryClient {
    static final Map<Integer, Schema> BY_ID = new ConcurrentHashMap<>();

    @Override
    public synchronized int register(String subject, Schema schema) {
        for (Map.Entry<Integer, Schema> e : BY_ID.entrySet()) {
            if (e.getValue().equals(schema)) {
                return e.getKey();
            }
        }
        int id = BY_ID.size() + 1;
        BY_ID.put(id, schema);
        return id;
    }

    @Override
    public Schema schemaById(int id) {
        Schema s = BY_ID.get(id);
        if (s == null) {
            throw new RegistryException(404, 40403, "Schema " + id + " not found");
        }
        return s;
    }

    @Override
    public int lookup(String subject, Schema schema) {
        return register(subject, schema);
    }
}
