package io.tally.registry;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The registry's state, rebuilt by applying the _schemas log in order. Apply is
 * deterministic: every instance that applies the same log reaches the same state, and a
 * record that conflicts with what the log already holds (an id bound to another schema, a
 * subject version taken by another id) is ignored by all of them alike. Writers therefore
 * need no leader: they append, read their own record back, and retry if they lost.
 */
public final class RegistryState {
    /** One subject version as stored. */
    public record Version(String subject, int version, int id, String schema, boolean deleted) {}

    private final Map<String, NavigableMap<Integer, Version>> subjects = new HashMap<>();
    private final Map<Integer, String> schemaById = new HashMap<>();
    private final Map<String, Integer> idBySchema = new HashMap<>();
    private final Map<String, CompatibilityLevel> subjectLevels = new HashMap<>();
    private final CompatibilityLevel defaultLevel;
    private CompatibilityLevel globalLevel;
    private int maxId;
    private long appliedOffset = -1;
    private long ignored;

    public RegistryState(CompatibilityLevel defaultLevel) {
        this.defaultLevel = defaultLevel;
        this.globalLevel = defaultLevel;
    }

    // ---- applying the log -------------------------------------------------------------

    public synchronized void apply(long offset, String keyJson, String valueJson) {
        JsonNode key = LogRecords.parse(keyJson);
        if (key != null) {
            switch (key.path("keytype").asText()) {
                case "SCHEMA" -> applySchema(key, LogRecords.parse(valueJson));
                case "CONFIG" -> applyConfig(key, LogRecords.parse(valueJson));
                case "DELETE_SUBJECT" -> applyDeleteSubject(LogRecords.parse(valueJson));
                default -> {} // NOOP and record types this registry does not use
            }
        }
        appliedOffset = Math.max(appliedOffset, offset);
        notifyAll();
    }

    private void applySchema(JsonNode key, JsonNode value) {
        String subject = key.path("subject").asText();
        int version = key.path("version").asInt();
        NavigableMap<Integer, Version> versions = subjects.get(subject);
        if (value == null) { // tombstone: permanent delete of one version
            if (versions != null && versions.remove(version) != null && versions.isEmpty()) {
                subjects.remove(subject);
            }
            forgetUnreferencedIds();
            return;
        }
        int id = value.path("id").asInt();
        String schema = value.path("schema").asText();
        boolean deleted = value.path("deleted").asBoolean(false);
        Version existing = versions == null ? null : versions.get(version);
        if (existing != null) {
            if (existing.id() != id) {
                ignored++; // the version is taken by another id: the earlier record won
                return;
            }
            versions.put(version, new Version(subject, version, id, existing.schema(), deleted));
            return;
        }
        String boundSchema = schemaById.get(id);
        Integer boundId = idBySchema.get(schema);
        if ((boundSchema != null && !boundSchema.equals(schema)) || (boundId != null && boundId != id)) {
            ignored++; // the id belongs to another schema, or the schema already has another id
            return;
        }
        if (versions != null && versions.values().stream().anyMatch(v -> !v.deleted() && v.id() == id)) {
            ignored++; // the subject already has this schema live under another version
            return;
        }
        subjects.computeIfAbsent(subject, s -> new TreeMap<>())
                .put(version, new Version(subject, version, id, schema, deleted));
        schemaById.put(id, schema);
        idBySchema.put(schema, id);
        maxId = Math.max(maxId, id);
    }

    private void applyConfig(JsonNode key, JsonNode value) {
        JsonNode subject = key.get("subject");
        CompatibilityLevel level = null;
        if (value != null) {
            try {
                level = CompatibilityLevel.parse(
                        value.path("compatibilityLevel").asText());
            } catch (RegistryError e) {
                ignored++;
                return;
            }
        }
        if (subject == null || subject.isNull()) {
            globalLevel = level == null ? defaultLevel : level;
        } else if (level == null) {
            subjectLevels.remove(subject.asText());
        } else {
            subjectLevels.put(subject.asText(), level);
        }
    }

    private void applyDeleteSubject(JsonNode value) {
        if (value == null) {
            return;
        }
        NavigableMap<Integer, Version> versions =
                subjects.get(value.path("subject").asText());
        if (versions == null) {
            return;
        }
        int upTo = value.path("version").asInt(Integer.MAX_VALUE);
        for (Version v : new ArrayList<>(versions.headMap(upTo, true).values())) {
            versions.put(v.version(), new Version(v.subject(), v.version(), v.id(), v.schema(), true));
        }
    }

    private void forgetUnreferencedIds() {
        Map<Integer, Boolean> live = new HashMap<>();
        subjects.values().forEach(vs -> vs.values().forEach(v -> live.put(v.id(), true)));
        schemaById.keySet().removeIf(id -> !live.containsKey(id));
        idBySchema.values().removeIf(id -> !live.containsKey(id));
        // maxId stays: an id once handed out is never handed out again.
    }

    /** Waits until the record at offset (or later) has been applied. */
    public synchronized boolean awaitApplied(long offset, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (appliedOffset < offset) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                return false;
            }
            wait(left);
        }
        return true;
    }

    // ---- queries ----------------------------------------------------------------------

    public synchronized long appliedOffset() {
        return appliedOffset;
    }

    public synchronized long ignoredRecords() {
        return ignored;
    }

    public synchronized int maxId() {
        return maxId;
    }

    public synchronized int schemaCount() {
        return schemaById.size();
    }

    public synchronized Optional<String> schemaById(int id) {
        return Optional.ofNullable(schemaById.get(id));
    }

    public synchronized Optional<Integer> idOf(String schema) {
        return Optional.ofNullable(idBySchema.get(schema));
    }

    /** Every version of subject, oldest first; deleted ones only when asked. */
    public synchronized List<Version> versions(String subject, boolean includeDeleted) {
        NavigableMap<Integer, Version> vs = subjects.get(subject);
        if (vs == null) {
            return List.of();
        }
        return vs.values().stream().filter(v -> includeDeleted || !v.deleted()).collect(Collectors.toList());
    }

    public synchronized List<String> subjects(boolean includeDeleted) {
        return subjects.entrySet().stream()
                .filter(e -> includeDeleted || e.getValue().values().stream().anyMatch(v -> !v.deleted()))
                .map(Map.Entry::getKey)
                .sorted()
                .collect(Collectors.toList());
    }

    public synchronized int maxVersion(String subject) {
        NavigableMap<Integer, Version> vs = subjects.get(subject);
        return vs == null || vs.isEmpty() ? 0 : vs.lastKey();
    }

    /** The subject versions that use schema id, deleted ones only when asked. */
    public synchronized List<Version> usesOf(int id, boolean includeDeleted) {
        List<Version> out = new ArrayList<>();
        for (Map.Entry<String, NavigableMap<Integer, Version>> e : new TreeMap<>(subjects).entrySet()) {
            for (Version v : e.getValue().values()) {
                if (v.id() == id && (includeDeleted || !v.deleted())) {
                    out.add(v);
                }
            }
        }
        return out;
    }

    public synchronized CompatibilityLevel globalLevel() {
        return globalLevel;
    }

    public synchronized Optional<CompatibilityLevel> subjectLevel(String subject) {
        return Optional.ofNullable(subjectLevels.get(subject));
    }

    public synchronized CompatibilityLevel effectiveLevel(String subject) {
        return subjectLevels.getOrDefault(subject, globalLevel);
    }
}
