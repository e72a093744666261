package io.tally.sql.format;

import io.tally.serde.SchemaRegistryClient;
import java.util.HashMap;
import java.util.Map;
import org.apache.avro.Schema;

/** A registry in memory, for unit tests of the format's logic (the ITs use the stack's registry). */
final class MemoryRegistry implements SchemaRegistryClient {
    static final MemoryRegistry SHARED = new MemoryRegistry();

    private final Map<Integer, Schema> byId = new HashMap<>();
    private final Map<String, Map<Schema, Integer>> bySubject = new HashMap<>();
    private final Map<String, Integer> newest = new HashMap<>();

    @Override
    public synchronized int register(String subject, Schema schema) {
        Map<Schema, Integer> ids = bySubject.computeIfAbsent(subject, s -> new HashMap<>());
        Integer id = ids.get(schema);
        if (id == null) {
            id = byId.size() + 1;
            byId.put(id, schema);
            ids.put(schema, id);
        }
        newest.put(subject, id);
        return id;
    }

    @Override
    public synchronized Schema schemaById(int id) {
        Schema s = byId.get(id);
        if (s == null) {
            throw new IllegalArgumentException("no schema " + id);
        }
        return s;
    }

    @Override
    public synchronized int lookup(String subject, Schema schema) {
        Integer id = bySubject.getOrDefault(subject, Map.of()).get(schema);
        if (id == null) {
            throw new IllegalArgumentException(subject + " does not hold " + schema);
        }
        return id;
    }

    @Override
    public synchronized Registered latest(String subject) {
        Integer id = newest.get(subject);
        return new Registered(id, byId.get(id));
    }
}
