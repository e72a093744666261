package io.tally.namespace;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Objects;
import java.util.Optional;

/**
 * One change of the control plane's namespaces table, as Debezium streams it to
 * tally.control.namespaces: the row after an insert, update or snapshot read, or the row
 * before a delete (the table has REPLICA IDENTITY FULL, so a delete still says which config
 * it removed: the provisioner needs its retention to retire the data). A plain class with
 * public fields so Flink keeps it in broadcast state with its POJO serializer.
 */
public class NamespaceChange {
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * Kafka header the gateway puts on every event: the version of its namespace's config the
     * gateway accepted it under (ASCII digits). A job processes the event with that version or
     * a later one, so a change applies to every write accepted after it.
     */
    public static final String VERSION_HEADER = "tally-namespace-version";
    /**
     * Kafka header beside the version: when the namespace the gateway accepted the event under was
     * created ({@link #createdMicros}, ASCII digits). Versions start at 1 again when a namespace is
     * deleted and created under its name, so only this tells a write to the new namespace (the job
     * waits for its creation) from a late one of the deleted namespace (a dead letter).
     */
    public static final String CREATED_HEADER = "tally-namespace-created";

    public String name;
    public long version;
    /** The config as stored: the JSON object of docs/design.md, "kind" included. */
    public String configJson;

    public boolean deleted;
    /**
     * When the row was created (its created_at, microseconds; 0 when unknown: a seed file, a row
     * of an earlier release). A namespace deleted and created again is a new one: its counters
     * start from zero, whatever the jobs and views still hold of the old one.
     */
    public long createdMicros;

    public NamespaceChange() {}

    public NamespaceChange(String name, long version, String configJson, boolean deleted) {
        this.name = name;
        this.version = version;
        this.configJson = configJson;
        this.deleted = deleted;
    }

    /**
     * Not a change: a clock tick a Flink job mixes into its control stream, so an operator without
     * timers can still act on time (dead-letter records that waited too long for their namespace).
     */
    public static NamespaceChange tick() {
        return new NamespaceChange("", 0, null, false);
    }

    public boolean tickOnly() {
        return name == null || name.isEmpty();
    }

    public static NamespaceChange upsert(String name, long version, String configJson) {
        return new NamespaceChange(name, version, configJson, false);
    }

    /**
     * Reads a Debezium change event value (JSON converter without schemas). Empty for a
     * tombstone (null value, written after a delete for compaction) and for events of other
     * tables or that carry no namespace row.
     */
    public static Optional<NamespaceChange> fromDebezium(byte[] value) {
        if (value == null || value.length == 0) {
            return Optional.empty();
        }
        JsonNode event;
        try {
            event = JSON.readTree(value);
        } catch (IOException e) {
            throw new IllegalArgumentException("not a Debezium change event: " + e.getMessage(), e);
        }
        JsonNode payload =
                event.has("payload") && event.has("schema") ? event.get("payload") : event; // either converter setting
        String op = payload.path("op").asText("");
        boolean delete = "d".equals(op);
        JsonNode row = payload.get(delete ? "before" : "after");
        if (row == null || row.isNull() || !row.hasNonNull("name") || !row.hasNonNull("config")) {
            return Optional.empty();
        }
        JsonNode config = row.get("config");
        // Debezium renders jsonb as its text (io.debezium.data.Json); accept an object too.
        String configJson = config.isTextual() ? config.asText() : config.toString();
        NamespaceChange change = new NamespaceChange(
                row.get("name").asText(), row.path("version").asLong(0), configJson, delete);
        change.createdMicros = createdMicros(row.path("created_at"));
        return Optional.of(change);
    }

    /**
     * created_at as Debezium renders a timestamptz: an ISO-8601 string (io.debezium.time.ZonedTimestamp);
     * epoch microseconds are taken too (time.precision.mode=connect). 0 when absent.
     */
    static long createdMicros(JsonNode value) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            return 0;
        }
        if (value.isNumber()) {
            return value.asLong();
        }
        try {
            java.time.Instant t = java.time.OffsetDateTime.parse(value.asText()).toInstant();
            return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000);
        } catch (java.time.format.DateTimeParseException | ArithmeticException e) {
            return 0;
        }
    }

    /** The validated config; the control plane only stores configs that pass, so a failure here means a bad row. */
    public NamespaceConfig config() {
        return NamespaceConfigParser.parse(name, configJson);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NamespaceChange c
                && c.version == version
                && c.deleted == deleted
                && c.createdMicros == createdMicros
                && Objects.equals(c.name, name)
                && Objects.equals(c.configJson, configJson);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, version, configJson, deleted, createdMicros);
    }

    @Override
    public String toString() {
        return (deleted ? "delete " : "upsert ") + name + " v" + version;
    }
}
