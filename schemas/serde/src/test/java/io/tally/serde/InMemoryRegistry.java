package io.tally.serde;

import java.util.HashMap;
import java.util.Map;
import org.apache.avro.Schema;

/** A registry fake for unit tests of the serde's own logic (the real one is tested in *IT). */
final class InMemoryRegistry implements SchemaRegistryClient {
    final Map<Integer, Schema> byId = new HashMap<>();
    final Map<String, Map<Schema, Integer>> bySubject = new HashMap<>();
    int calls;

    @Override
    public synchronized int register(String subject, Schema schema) {
        calls++;
        Integer existing = byId.entrySet().stream()
                .filter(e -> e.getValue().equals(schema))
                .map(Map.Entry::getKey)
                .findFirst()
                .orElse(null);
        int id = existing != null ? existing : byId.size() + 1;
        byId.put(id, schema);
        bySubject.computeIfAbsent(subject, s -> new HashMap<>()).put(schema, id);
        return id;
    }

    @Override
    public synchronized Schema schemaById(int id) {
        calls++;
        Schema s = byId.get(id);
        if (s == null) {
            throw new RegistryException(404, 40403, "Schema " + id + " not found");
        }
        return s;
    }

    @Override
    public synchronized int lookup(String subject, Schema schema) {
        calls++;
        Integer id = bySubject.getOrDefault(subject, Map.of()).get(schema);
        if (id == null) {
            throw new RegistryException(404, 40403, "Schema not found");
        }
        return id;
    }
}
