package io.tally.jobs.timeseries;

import io.tally.jobs.elasticsearch.IndexDoc;
import io.tally.model.Bytes;
import io.tally.model.elasticsearch.DocumentFields;
import io.tally.model.elasticsearch.DocumentIds;
import io.tally.namespace.FieldValues;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfig.FieldType;
import java.util.List;
import java.util.Map;
import tally.v1.EventItem;

/**
 * Builds an event's document: time_series_id, event_time (ms, for date queries),
 * event_time_us, event_id, and each item named in the namespace's field_mapping, converted from
 * its UTF-8 text to the mapped type. An item that is not a value of its type (as Elasticsearch
 * would refuse it, {@link FieldValues}) is left out of the document and reported, so the caller
 * can dead-letter it (the event itself is still stored in Cassandra). The _id is
 * {@link DocumentIds}: one-to-one with the event and within Elasticsearch's size limit.
 */
final class IndexDocs {
    private IndexDocs() {}

    static IndexDoc of(
            NamespaceConfig ns,
            String index,
            String tsid,
            long eventTimeMicros,
            String eventId,
            List<EventItem> items,
            List<String> refused) {
        IndexDoc d = new IndexDoc();
        d.namespace = ns.name();
        d.index = index;
        d.id = DocumentIds.of(tsid, eventTimeMicros, eventId);
        d.source.put(DocumentFields.TIME_SERIES_ID, tsid);
        d.source.put(DocumentFields.EVENT_TIME, Math.floorDiv(eventTimeMicros, 1000));
        d.source.put(DocumentFields.EVENT_TIME_US, eventTimeMicros);
        d.source.put(DocumentFields.EVENT_ID, eventId);
        Map<String, FieldType> mapping = ns.index().fieldMapping();
        for (EventItem item : items) {
            String key = item.getKey();
            FieldType type = mapping.get(key);
            if (type == null) {
                continue;
            }
            String text = Bytes.utf8(item.getValue());
            String why = FieldValues.whyNot(type, text);
            if (why == null) {
                d.source.put(key, FieldValues.convert(type, text));
            } else {
                refused.add(key + " (" + type + "): " + why);
            }
        }
        return d;
    }
}
