package io.tally.registry;

import io.tally.registry.CompatibilityChecker.Earlier;
import io.tally.registry.RegistryState.Version;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;

/**
 * The registry's operations with Confluent semantics. Reads are served from the state this
 * instance has applied; every write goes through the log, and a write is answered only once
 * the log holds it.
 */
public final class RegistryService {
    static final int MAX_SUBJECT_LENGTH = 255;
    private static final int WRITE_ATTEMPTS = 8;

    private final RegistryState state;
    private final SchemaLog log;
    private final CompatibilityLevel defaultLevel;
    private final Object writeLock = new Object();

    public RegistryService(RegistryState state, SchemaLog log, CompatibilityLevel defaultLevel) {
        this.state = state;
        this.log = log;
        this.defaultLevel = defaultLevel;
    }

    public RegistryState state() {
        return state;
    }

    // ---- schemas ----------------------------------------------------------------------

    /** Parses an AVRO schema; its canonical text (Avro's own JSON form) is what is stored and compared. */
    static Schema parse(String schemaType, String text, boolean hasReferences) {
        if (schemaType != null && !schemaType.equalsIgnoreCase("AVRO")) {
            throw new RegistryError(
                    422,
                    42201,
                    "Invalid schema: schema type " + schemaType + " is not supported by this registry (AVRO only)");
        }
        if (hasReferences) {
            throw new RegistryError(
                    422,
                    42201,
                    "Invalid schema: schema references are not supported; register a self-contained schema");
        }
        if (text == null || text.isBlank()) {
            throw RegistryError.invalidSchema("empty schema");
        }
        try {
            return new Schema.Parser().setValidateDefaults(true).parse(text);
        } catch (SchemaParseException | IllegalArgumentException | NullPointerException e) {
            throw RegistryError.invalidSchema(e.getMessage());
        } catch (RuntimeException e) {
            throw RegistryError.invalidSchema(e.toString());
        }
    }

    public int register(String subject, Schema schema) {
        checkSubject(subject);
        String canonical = schema.toString();
        for (int attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
            synchronized (writeLock) {
                sync();
                for (Version v : state.versions(subject, false)) {
                    if (v.schema().equals(canonical)) {
                        return v.id();
                    }
                }
                List<String> problems = CompatibilityChecker.check(
                        state.effectiveLevel(subject), schema, earlier(subject, state.versions(subject, false)));
                if (!problems.isEmpty()) {
                    throw new RegistryError(
                            409,
                            409,
                            "Schema being registered is incompatible with an earlier schema " + "for subject \""
                                    + subject + "\", details: " + problems);
                }
                int id = state.idOf(canonical).orElse(state.maxId() + 1);
                int version = state.maxVersion(subject) + 1;
                append(
                        LogRecords.schemaKey(subject, version),
                        LogRecords.schemaValue(subject, version, id, canonical, false));
                Optional<Version> won = state.versions(subject, true).stream()
                        .filter(v -> v.version() == version && v.id() == id)
                        .findFirst();
                if (won.isPresent()) {
                    return id;
                }
                // Another instance wrote first (its record came earlier in the log): try again on the new state.
            }
        }
        throw new RegistryError(
                500,
                50001,
                "Error while registering schema: could not claim an id after " + WRITE_ATTEMPTS
                        + " attempts under concurrent writers");
    }

    public Version lookup(String subject, Schema schema, boolean includeDeleted) {
        List<Version> versions = state.versions(subject, includeDeleted);
        if (versions.isEmpty()) {
            throw RegistryError.subjectNotFound(subject);
        }
        String canonical = schema.toString();
        return versions.stream()
                .filter(v -> v.schema().equals(canonical))
                .reduce((a, b) -> b)
                .orElseThrow(() -> RegistryError.schemaNotFound("not found under subject '" + subject + "'"));
    }

    public String schemaById(int id) {
        return state.schemaById(id).orElseThrow(() -> RegistryError.schemaNotFound(String.valueOf(id)));
    }

    public List<Version> usesOf(int id, boolean includeDeleted) {
        schemaById(id);
        return state.usesOf(id, includeDeleted);
    }

    // ---- subjects and versions -----------------------------------------------------------

    public List<String> subjects(boolean includeDeleted) {
        return state.subjects(includeDeleted);
    }

    public List<Integer> versions(String subject, boolean includeDeleted) {
        List<Version> vs = state.versions(subject, includeDeleted);
        if (vs.isEmpty()) {
            throw RegistryError.subjectNotFound(subject);
        }
        return vs.stream().map(Version::version).toList();
    }

    public Version version(String subject, String versionId, boolean includeDeleted) {
        List<Version> vs = state.versions(subject, includeDeleted);
        if (vs.isEmpty()) {
            throw RegistryError.subjectNotFound(subject);
        }
        if (isLatest(versionId)) {
            List<Version> live = vs.stream().filter(v -> !v.deleted()).toList();
            if (live.isEmpty()) {
                throw RegistryError.subjectNotFound(subject);
            }
            return live.get(live.size() - 1);
        }
        int n = parseVersion(versionId);
        return vs.stream()
                .filter(v -> v.version() == n)
                .findFirst()
                .orElseThrow(() -> RegistryError.versionNotFound(subject, n));
    }

    public List<Integer> deleteSubject(String subject, boolean permanent) {
        synchronized (writeLock) {
            sync();
            List<Version> all = state.versions(subject, true);
            if (all.isEmpty()) {
                throw RegistryError.subjectNotFound(subject);
            }
            boolean anyLive = all.stream().anyMatch(v -> !v.deleted());
            if (!permanent) {
                if (!anyLive) {
                    throw new RegistryError(
                            404,
                            40404,
                            "Subject '" + subject + "' was soft deleted. Set permanent=true to delete permanently");
                }
                List<Integer> live = all.stream()
                        .filter(v -> !v.deleted())
                        .map(Version::version)
                        .toList();
                append(
                        LogRecords.deleteSubjectKey(subject),
                        LogRecords.deleteSubjectValue(subject, state.maxVersion(subject)));
                return live;
            }
            if (anyLive) {
                throw new RegistryError(
                        409, 40405, "Subject '" + subject + "' was not deleted first before being permanently deleted");
            }
            List<Integer> removed = new ArrayList<>();
            for (Version v : all) {
                append(LogRecords.schemaKey(subject, v.version()), null);
                removed.add(v.version());
            }
            return removed;
        }
    }

    public int deleteVersion(String subject, String versionId, boolean permanent) {
        synchronized (writeLock) {
            sync();
            Version v = version(subject, versionId, true);
            if (!permanent) {
                if (v.deleted()) {
                    throw new RegistryError(
                            404,
                            40406,
                            "Subject '" + subject + "' Version " + v.version()
                                    + " was soft deleted. Set permanent=true to delete permanently");
                }
                append(
                        LogRecords.schemaKey(subject, v.version()),
                        LogRecords.schemaValue(subject, v.version(), v.id(), v.schema(), true));
            } else {
                if (!v.deleted()) {
                    throw new RegistryError(
                            409,
                            40407,
                            "Subject '" + subject + "' Version " + v.version()
                                    + " was not deleted first before being permanently deleted");
                }
                append(LogRecords.schemaKey(subject, v.version()), null);
            }
            return v.version();
        }
    }

    // ---- compatibility ------------------------------------------------------------------

    /** Checks schema against the given version (or, for transitive levels and version null, all live versions). */
    public List<String> checkCompatibility(String subject, String versionId, Schema schema) {
        List<Version> live = state.versions(subject, false);
        if (live.isEmpty()) {
            throw RegistryError.subjectNotFound(subject);
        }
        CompatibilityLevel level = state.effectiveLevel(subject);
        List<Version> against;
        if (versionId == null || level.transitive) {
            against = live;
        } else {
            against = List.of(version(subject, versionId, false));
        }
        return CompatibilityChecker.check(level, schema, earlier(subject, against));
    }

    // ---- config ---------------------------------------------------------------------------

    public CompatibilityLevel globalLevel() {
        return state.globalLevel();
    }

    public CompatibilityLevel setLevel(String subjectOrNull, String raw) {
        CompatibilityLevel level = CompatibilityLevel.parse(raw);
        if (subjectOrNull != null) {
            checkSubject(subjectOrNull);
        }
        synchronized (writeLock) {
            append(LogRecords.configKey(subjectOrNull), LogRecords.configValue(level));
        }
        return level;
    }

    public CompatibilityLevel subjectLevel(String subject, boolean defaultToGlobal) {
        Optional<CompatibilityLevel> level = state.subjectLevel(subject);
        if (level.isPresent()) {
            return level.get();
        }
        if (defaultToGlobal) {
            return state.globalLevel();
        }
        throw new RegistryError(
                404, 40408, "Subject '" + subject + "' does not have subject-level compatibility configured");
    }

    /** Removes a subject's level (or resets the global one to the default); returns the level it had. */
    public CompatibilityLevel deleteLevel(String subjectOrNull) {
        synchronized (writeLock) {
            sync();
            CompatibilityLevel previous;
            if (subjectOrNull == null) {
                previous = state.globalLevel();
            } else {
                previous = state.subjectLevel(subjectOrNull)
                        .orElseThrow(() -> RegistryError.subjectNotFound(subjectOrNull));
            }
            append(LogRecords.configKey(subjectOrNull), null);
            return previous;
        }
    }

    public CompatibilityLevel defaultLevel() {
        return defaultLevel;
    }

    // ---- helpers ---------------------------------------------------------------------------

    private static List<Earlier> earlier(String subject, List<Version> versions) {
        List<Earlier> out = new ArrayList<>();
        for (Version v : versions) {
            out.add(new Earlier(v.version(), new Schema.Parser().parse(v.schema())));
        }
        return out;
    }

    static boolean isLatest(String versionId) {
        return "latest".equals(versionId) || "-1".equals(versionId);
    }

    static int parseVersion(String versionId) {
        try {
            int n = Integer.parseInt(versionId);
            if (n < 1) {
                throw RegistryError.invalidVersion(versionId);
            }
            return n;
        } catch (NumberFormatException e) {
            throw RegistryError.invalidVersion(versionId);
        }
    }

    static void checkSubject(String subject) {
        if (subject == null
                || subject.isBlank()
                || subject.length() > MAX_SUBJECT_LENGTH
                || subject.chars().anyMatch(Character::isISOControl)) {
            throw new RegistryError(
                    422, 42208, "Invalid subject name: it must be 1-" + MAX_SUBJECT_LENGTH + " printable characters");
        }
    }

    private void sync() {
        try {
            log.syncToEnd();
        } catch (RegistryError e) {
            throw e;
        } catch (Exception e) {
            throw new RegistryError(500, 50001, "Error while reading the _schemas log: " + e.getMessage());
        }
    }

    private void append(String key, String value) {
        try {
            log.append(key, value);
        } catch (RegistryError e) {
            throw e;
        } catch (Exception e) {
            throw new RegistryError(500, 50001, "Error while storing to the _schemas log: " + e.getMessage());
        }
    }
}
