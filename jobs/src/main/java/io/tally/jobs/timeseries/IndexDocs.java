package io.tally.jobs.timeseries;

import io.tally.namespace.FieldValues;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfig.FieldType;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.avro.generic.GenericRecord;

/**
 * Builds an event's document: time_series_id, event_time (ms, for date queries),
 * event_time_us, event_id, and each item named in the namespace's field_mapping, converted from
 * its UTF-8 text to the mapped type. An item whose text does not parse as its type is left out
 * of the document (the event itself is still stored in Cassandra).
 */
final class IndexDocs {
    private IndexDocs() {}

    static IndexDoc of(NamespaceConfig ns, String index, String tsid, long eventTimeMicros, String eventId,
                       List<GenericRecord> items) {
        IndexDoc d = new IndexDoc();
        d.index = index;
        d.id = tsid + "/" + eventTimeMicros + "/" + eventId;
        d.source.put("time_series_id", tsid);
        d.source.put("event_time", Math.floorDiv(eventTimeMicros, 1000));
        d.source.put("event_time_us", eventTimeMicros);
        d.source.put("event_id", eventId);
        Map<String, FieldType> mapping = ns.index().fieldMapping();
        for (GenericRecord item : items) {
            String key = item.get("key").toString();
            FieldType type = mapping.get(key);
            if (type == null) {
                continue;
            }
            java.nio.ByteBuffer b = ((java.nio.ByteBuffer) item.get("value")).duplicate();
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            Object value = FieldValues.convert(type, new String(bytes, StandardCharsets.UTF_8));
            if (value != null) {
                d.source.put(key, value);
            }
        }
        return d;
    }

    /**
     * Makes Elasticsearch ready for a namespace's config (idempotent; names were validated as
     * safe index parts): its index template, for the slice indices to come, and its field_mapping
     * on the indices that exist (new fields are added; a changed type Elasticsearch refuses is
     * logged and applies from the next slice's index, made from the template).
     */
    static void putTemplateAndMapping(ElasticsearchAdmin elasticsearch, NamespaceConfig ns) throws Exception {
        elasticsearch.put("/_index_template/tally-" + ns.name(), template(ns));
        try {
            elasticsearch.putOnExisting("/tally-" + ns.name() + "-*/_mapping", mapping(ns));
        } catch (IllegalStateException e) {
            org.slf4j.LoggerFactory.getLogger(IndexDocs.class).warn("field_mapping of {} reaches existing indices only partly: {}",
                    ns.name(), e.getMessage());
        }
    }

    /** The mapping of a namespace's indices: the fixed fields and its field_mapping. */
    static String mapping(NamespaceConfig ns) {
        return "{\"dynamic\":false,\"properties\":{" + properties(ns) + "}}";
    }

    private static String properties(NamespaceConfig ns) {
        StringBuilder props = new StringBuilder("\"time_series_id\":{\"type\":\"keyword\"},"
                + "\"event_time\":{\"type\":\"date\",\"format\":\"epoch_millis\"},"
                + "\"event_time_us\":{\"type\":\"long\"},\"event_id\":{\"type\":\"keyword\"}");
        ns.index().fieldMapping().forEach((field, type) -> props.append(",\"").append(field)
                .append("\":{\"type\":\"").append(type.name().toLowerCase()).append("\"}"));
        return props.toString();
    }

    /** The composable index template of a namespace: mapping, settings and its alias. */
    static String template(NamespaceConfig ns) {
        String props = properties(ns);
        return "{\"index_patterns\":[\"tally-" + ns.name() + "-*\"],\"priority\":100,\"template\":{"
                + "\"settings\":{\"number_of_shards\":1,\"number_of_replicas\":0,\"refresh_interval\":\""
                + ns.index().refreshInterval().toMillis() + "ms\"},"
                + "\"mappings\":{\"dynamic\":false,\"properties\":{" + props + "}},"
                + "\"aliases\":{\"tally-" + ns.name() + "\":{}}}}";
    }
}
