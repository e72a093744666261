package io.tally.gateway;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * WriteEventRecords' common body read with Jackson's streaming parser, straight into the few
 * strings the records are made of. The tree (ObjectMapper.readTree) built a node for every field of
 * every event and was the largest of the gateway's own costs under a TimeSeries write in the
 * profiles. Only the common shape is read: {namespace, events[{timeSeriesId, eventTime, eventId?,
 * eventItems[{eventItemKey, eventItemValue}]}]}, every value a string, each field once, at most the
 * limits' events and items. Anything else (another field, a null, a number, a field twice or
 * missing, more events or items than allowed, content after the object, JSON that does not parse)
 * reads as null and the caller reads the body as a tree, whose refusals name the field.
 */
final class EventRecordsBody {
    private static final String[] BODY = {"namespace", "events"};
    private static final String[] EVENT = {"timeSeriesId", "eventTime", "eventId", "eventItems"};
    private static final String[] ITEM = {"eventItemKey", "eventItemValue"};

    /** An item as sent: its key and its value in base64. */
    record Item(String key, String base64Value) {}

    /** An event as sent; eventId null when the caller sent none. */
    record Event(String timeSeriesId, String eventTime, String eventId, List<Item> items) {}

    /** The body: a namespace's name and at least one event. */
    record Body(String namespace, List<Event> events) {}

    private EventRecordsBody() {}

    /** The body when it has the common shape within the limits, else null. */
    static Body read(Buffer body, int maxEvents, int maxItems) {
        try (JsonParser p = FlatStringFields.open(body)) {
            if (p == null || p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            String namespace = null;
            List<Event> events = null;
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                int field = FlatStringFields.indexOf(BODY, p.currentName());
                JsonToken v = p.nextToken();
                if (field == 0 && namespace == null && v == JsonToken.VALUE_STRING) {
                    namespace = p.getText();
                } else if (field == 1 && events == null && v == JsonToken.START_ARRAY) {
                    events = events(p, maxEvents, maxItems);
                    if (events == null) {
                        return null;
                    }
                } else {
                    return null;
                }
            }
            if (t != JsonToken.END_OBJECT || p.nextToken() != null || namespace == null || events == null) {
                return null;
            }
            return new Body(namespace, events);
        } catch (IOException e) { // not JSON: the tree path says how
            return null;
        }
    }

    /** The events of an array the parser has just opened; null when one is not of the shape. */
    private static List<Event> events(JsonParser p, int maxEvents, int maxItems) throws IOException {
        List<Event> events = new ArrayList<>();
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.START_OBJECT) {
            if (events.size() == maxEvents) {
                return null;
            }
            Event e = event(p, maxItems);
            if (e == null) {
                return null;
            }
            events.add(e);
        }
        return t == JsonToken.END_ARRAY && !events.isEmpty() ? events : null;
    }

    private static Event event(JsonParser p, int maxItems) throws IOException {
        String[] text = new String[3];
        List<Item> items = null;
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            int field = FlatStringFields.indexOf(EVENT, p.currentName());
            JsonToken v = p.nextToken();
            if (field >= 0 && field < 3 && text[field] == null && v == JsonToken.VALUE_STRING) {
                text[field] = p.getText();
            } else if (field == 3 && items == null && v == JsonToken.START_ARRAY) {
                items = items(p, maxItems);
                if (items == null) {
                    return null;
                }
            } else {
                return null;
            }
        }
        if (t != JsonToken.END_OBJECT || text[0] == null || text[1] == null || items == null) {
            return null;
        }
        return new Event(text[0], text[1], text[2], items);
    }

    private static List<Item> items(JsonParser p, int maxItems) throws IOException {
        List<Item> items = new ArrayList<>();
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.START_OBJECT) {
            if (items.size() == maxItems) {
                return null;
            }
            String[] text = new String[2];
            JsonToken f;
            while ((f = p.nextToken()) == JsonToken.FIELD_NAME) {
                int field = FlatStringFields.indexOf(ITEM, p.currentName());
                if (field < 0 || text[field] != null || p.nextToken() != JsonToken.VALUE_STRING) {
                    return null;
                }
                text[field] = p.getText();
            }
            if (f != JsonToken.END_OBJECT || text[0] == null || text[1] == null) {
                return null;
            }
            items.add(new Item(text[0], text[1]));
        }
        return t == JsonToken.END_ARRAY ? items : null;
    }
}
