package io.tally.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The records of the _schemas topic, in Confluent's own layout (JSON keys and values), so
 * the topic reads the same as one a Confluent registry wrote:
 * SCHEMA {subject, version} -> {subject, version, id, schema, deleted} (null: hard delete),
 * CONFIG {subject|null} -> {compatibilityLevel} (null: unset),
 * DELETE_SUBJECT {subject} -> {subject, version} (soft-delete every version up to version).
 */
final class LogRecords {
    static final ObjectMapper JSON = new ObjectMapper();

    private LogRecords() {}

    static String schemaKey(String subject, int version) {
        return JSON.createObjectNode()
                .put("keytype", "SCHEMA")
                .put("subject", subject)
                .put("version", version)
                .put("magic", 1)
                .toString();
    }

    static String schemaValue(String subject, int version, int id, String schema, boolean deleted) {
        return JSON.createObjectNode()
                .put("subject", subject)
                .put("version", version)
                .put("id", id)
                .put("schema", schema)
                .put("deleted", deleted)
                .toString();
    }

    static String configKey(String subjectOrNull) {
        ObjectNode key = JSON.createObjectNode().put("keytype", "CONFIG");
        if (subjectOrNull == null) {
            key.putNull("subject");
        } else {
            key.put("subject", subjectOrNull);
        }
        return key.put("magic", 0).toString();
    }

    static String configValue(CompatibilityLevel level) {
        return JSON.createObjectNode().put("compatibilityLevel", level.name()).toString();
    }

    static String deleteSubjectKey(String subject) {
        return JSON.createObjectNode()
                .put("keytype", "DELETE_SUBJECT")
                .put("subject", subject)
                .put("magic", 0)
                .toString();
    }

    static String deleteSubjectValue(String subject, int upToVersion) {
        return JSON.createObjectNode()
                .put("subject", subject)
                .put("version", upToVersion)
                .toString();
    }

    static JsonNode parse(String json) {
        if (json == null) {
            return null;
        }
        try {
            return JSON.readTree(json);
        } catch (Exception e) {
            return null;
        }
    }
}
