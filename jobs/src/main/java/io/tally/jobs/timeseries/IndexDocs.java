package io.tally.jobs.timeseries;

import io.tally.jobs.elasticsearch.IndexDoc;
import io.tally.namespace.FieldValues;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfig.FieldType;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import tally.v1.EventItem;

/**
 * Builds an event's document: time_series_id, event_time (ms, for date queries),
 * event_time_us, event_id, and each item named in the namespace's field_mapping, converted from
 * its UTF-8 text to the mapped type. An item whose text does not parse as its type is left out
 * of the document (the event itself is still stored in Cassandra).
 */
final class IndexDocs {
    private IndexDocs() {}

    static IndexDoc of(
            NamespaceConfig ns,
            String index,
            String tsid,
            long eventTimeMicros,
            String eventId,
            List<EventItem> items) {
        IndexDoc d = new IndexDoc();
        d.namespace = ns.name();
        d.index = index;
        d.id = tsid + "/" + eventTimeMicros + "/" + eventId;
        d.source.put("time_series_id", tsid);
        d.source.put("event_time", Math.floorDiv(eventTimeMicros, 1000));
        d.source.put("event_time_us", eventTimeMicros);
        d.source.put("event_id", eventId);
        Map<String, FieldType> mapping = ns.index().fieldMapping();
        for (EventItem item : items) {
            String key = item.getKey();
            FieldType type = mapping.get(key);
            if (type == null) {
                continue;
            }
            java.nio.ByteBuffer b = item.getValue().duplicate();
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            Object value = FieldValues.convert(type, new String(bytes, StandardCharsets.UTF_8));
            if (value != null) {
                d.source.put(key, value);
            }
        }
        return d;
    }
}
