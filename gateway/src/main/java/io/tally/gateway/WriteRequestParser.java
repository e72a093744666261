package io.tally.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.gateway.service.ErrorCode;
import io.tally.gateway.service.Fnv64;
import io.tally.gateway.service.NamespaceResolver;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.WriteBatch;
import io.tally.gateway.service.WriteBatch.Outgoing;
import io.tally.model.AcceptWindow;
import io.tally.model.KeyParts;
import io.tally.model.Micros;
import io.tally.model.Topics;
import io.tally.namespace.FieldValues;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfig.FieldType;
import io.vertx.core.buffer.Buffer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import tally.v1.CounterEvent;
import tally.v1.CounterOp;
import tally.v1.EventItem;
import tally.v1.TimeSeriesEvent;

/**
 * Turns the Counter and TimeSeries articles' request JSON into Avro records for Kafka,
 * validating everything first: a request that fails any check produces nothing.
 */
final class WriteRequestParser {
    static final String COUNTER_TOPIC = Topics.COUNTER_EVENTS;
    static final String TIMESERIES_TOPIC = Topics.TIMESERIES_EVENTS;
    /** The events' source field. */
    static final String SOURCE = "gateway";

    private final NamespaceResolver namespaces;
    private final int maxEvents;
    private final int maxItems;
    private final int maxValueBytes;
    private final int maxEventBytes;
    private final int maxIdLength;

    WriteRequestParser(NamespaceResolver namespaces, GatewayConfig config) {
        this.namespaces = namespaces;
        this.maxEvents = config.intOf(GatewayConfig.MAX_EVENTS);
        this.maxItems = config.intOf(GatewayConfig.MAX_ITEMS);
        this.maxValueBytes = config.intOf(GatewayConfig.MAX_VALUE);
        this.maxEventBytes = config.intOf(GatewayConfig.MAX_EVENT);
        this.maxIdLength = config.intOf(GatewayConfig.MAX_ID);
    }

    NamespaceConfig namespace(JsonNode body, NamespaceConfig.Kind kind) {
        return RequestJson.namespace(body, namespaces, kind, maxIdLength);
    }

    /** AddCount (op ADD, with delta) and ClearCount (op CLEAR). */
    WriteBatch counter(JsonNode body, boolean clear, long nowMicros) {
        RequestJson.object(body, "body");
        NamespaceConfig ns = namespace(body, NamespaceConfig.Kind.COUNTER);
        String counter = RequestJson.text(body, "counter_name", "counter_name", maxIdLength);
        long delta = clear ? 0 : RequestJson.integer(body, "delta", "delta");
        JsonNode token = body.get("idempotency_token");
        String eventId;
        long eventTime;
        List<Integer> generated = new ArrayList<>();
        if (token == null || token.isNull()) {
            if (ns.counterType().durable()) {
                throw new ServiceException(
                        ErrorCode.IDEMPOTENCY_TOKEN_REQUIRED,
                        ns.counterType()
                                + " counters need an idempotency_token {token, generation_time}, so retries count once",
                        "idempotency_token");
            }
            eventId = UUID.randomUUID().toString();
            eventTime = nowMicros;
            generated.add(0);
        } else {
            RequestJson.object(token, "idempotency_token");
            eventId = RequestJson.text(token, "token", "idempotency_token.token", maxIdLength);
            eventTime = RequestJson.instantMicros(token, "generation_time", "idempotency_token.generation_time");
        }
        checkWindow(ns, eventTime, nowMicros, token == null ? "body" : "idempotency_token.generation_time");
        CounterEvent rec = new CounterEvent(
                ns.name(),
                counter,
                clear ? CounterOp.CLEAR : CounterOp.ADD,
                delta,
                Micros.toInstant(eventTime),
                eventId,
                SOURCE);
        long created = namespaces.createdMicros(ns.name());
        long idemKey = digest(KeyParts.join(ns.name(), created, counter, eventId));
        long digest = digest((clear ? "CLEAR" : "ADD") + "|" + delta + "|" + eventTime);
        Outgoing out = new Outgoing(
                COUNTER_TOPIC,
                ns.name() + "/" + counter,
                rec,
                idemKey,
                digest,
                namespaces.version(ns.name()),
                created,
                eventTime,
                token == null ? "body" : "idempotency_token.generation_time");
        return new WriteBatch(ns, List.of(out), List.of(eventId), generated);
    }

    /** WriteEventRecords(Sync): {namespace, events[]{timeSeriesId, eventTime, eventId, eventItems[]}}. */
    WriteBatch events(JsonNode body, long nowMicros) {
        RequestJson.object(body, "body");
        NamespaceConfig ns = namespace(body, NamespaceConfig.Kind.TIMESERIES);
        JsonNode events = RequestJson.array(body, "events", "events");
        if (events.isEmpty()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, "events must not be empty", "events");
        }
        if (events.size() > maxEvents) {
            throw new ServiceException(
                    ErrorCode.TOO_MANY_EVENTS,
                    events.size() + " events in one request; the limit is " + maxEvents,
                    "events");
        }
        EventsBatch batch = new EventsBatch(ns, events.size());
        for (int i = 0; i < events.size(); i++) {
            String p = "events[" + i + "]";
            JsonNode e = RequestJson.object(events.get(i), p);
            String tsid = RequestJson.text(e, "timeSeriesId", p + ".timeSeriesId", maxIdLength);
            String timeField = p + ".eventTime";
            long eventTime = RequestJson.instantMicros(e, "eventTime", timeField);
            checkWindow(ns, eventTime, nowMicros, timeField);
            String eventId = RequestJson.optionalText(e, "eventId", p + ".eventId", maxIdLength);
            JsonNode items = RequestJson.array(e, "eventItems", p + ".eventItems");
            if (items.size() > maxItems) {
                throw new ServiceException(
                        ErrorCode.TOO_MANY_ITEMS,
                        items.size() + " items in " + p + "; the limit is " + maxItems,
                        p + ".eventItems");
            }
            EventDraft draft = batch.event(i, tsid, eventTime, eventId, items.size());
            for (int j = 0; j < items.size(); j++) {
                String ip = p + ".eventItems[" + j + "]";
                JsonNode item = RequestJson.object(items.get(j), ip);
                String key = RequestJson.text(item, "eventItemKey", ip + ".eventItemKey", maxIdLength);
                byte[] value = base64(item, ip + ".eventItemValue");
                checkMapped(ns, key, value, ip + ".eventItemValue");
                draft.add(key, value);
            }
            batch.add(draft, p, timeField);
        }
        return batch.done();
    }

    /**
     * The same batch from WriteEventRecords' common body read without a tree (EventRecordsBody), with
     * the same checks; null when the body is not of that shape or any check refuses it: the tree
     * path then reads it, and its refusal names the field as it always has.
     */
    WriteBatch commonEvents(Buffer body, long nowMicros) {
        EventRecordsBody.Body common = EventRecordsBody.read(body, maxEvents, maxItems);
        if (common == null) {
            return null;
        }
        try {
            return events(common, nowMicros);
        } catch (ServiceException refused) {
            return null;
        }
    }

    private WriteBatch events(EventRecordsBody.Body body, long nowMicros) {
        NamespaceConfig ns = namespaces.require(
                RequestJson.checkedId(body.namespace(), "namespace", maxIdLength), NamespaceConfig.Kind.TIMESERIES);
        EventsBatch batch = new EventsBatch(ns, body.events().size());
        for (int i = 0; i < body.events().size(); i++) {
            EventRecordsBody.Event e = body.events().get(i);
            String p = "events[" + i + "]";
            String tsid = RequestJson.checkedId(e.timeSeriesId(), p + ".timeSeriesId", maxIdLength);
            String timeField = p + ".eventTime";
            long eventTime = RequestJson.instantMicros(e.eventTime(), timeField);
            checkWindow(ns, eventTime, nowMicros, timeField);
            String eventId =
                    e.eventId() == null ? null : RequestJson.checkedId(e.eventId(), p + ".eventId", maxIdLength);
            EventDraft draft =
                    batch.event(i, tsid, eventTime, eventId, e.items().size());
            // a refusal here is never answered (the tree path names it), so the items' paths go unnumbered
            for (EventRecordsBody.Item item : e.items()) {
                String key = RequestJson.checkedId(item.key(), p + ".eventItems[].eventItemKey", maxIdLength);
                byte[] value = base64(item.base64Value(), p + ".eventItems[].eventItemValue");
                checkMapped(ns, key, value, p + ".eventItems[].eventItemValue");
                draft.add(key, value);
            }
            batch.add(draft, p, timeField);
        }
        return batch.done();
    }

    /** The records of one request's events, as they are accepted one by one. */
    private final class EventsBatch {
        private final NamespaceConfig ns;
        private final long version;
        private final long created;
        private final List<Outgoing> out;
        private final List<String> ids;
        private final List<Integer> generated = new ArrayList<>();

        EventsBatch(NamespaceConfig ns, int events) {
            this.ns = ns;
            this.version = namespaces.version(ns.name()); // once a request: its events share the namespace
            this.created = namespaces.createdMicros(ns.name());
            this.out = new ArrayList<>(events);
            this.ids = new ArrayList<>(events);
        }

        /** Event i, its id made here when the caller sent none. */
        EventDraft event(int i, String tsid, long eventTime, String eventId, int items) {
            if (eventId == null) {
                eventId = UUID.randomUUID().toString();
                generated.add(i);
            }
            return new EventDraft(ns.name(), tsid, eventTime, eventId, items);
        }

        /** The event with its items, refused when its encoding would be too large; timeField names its time. */
        void add(EventDraft d, String path, String timeField) {
            if (d.encoded > maxEventBytes) {
                throw new ServiceException(
                        ErrorCode.EVENT_TOO_LARGE,
                        path + " is about " + d.encoded + " bytes encoded; the limit is " + maxEventBytes
                                + " (max.event.bytes, under Kafka's 1 MiB message limit)",
                        path);
            }
            TimeSeriesEvent rec =
                    new TimeSeriesEvent(ns.name(), d.tsid, Micros.toInstant(d.eventTime), d.eventId, d.items, SOURCE);
            out.add(new Outgoing(
                    TIMESERIES_TOPIC,
                    ns.name() + "/" + d.tsid,
                    rec,
                    digest(KeyParts.join(ns.name(), created, d.tsid, d.eventTime, d.eventId)),
                    d.payloadDigest,
                    version,
                    created,
                    d.eventTime,
                    timeField));
            ids.add(d.eventId);
        }

        WriteBatch done() {
            return new WriteBatch(ns, out, ids, generated);
        }
    }

    /** One event's items as they are read, with an upper bound of its encoding and its payload's digest. */
    private static final class EventDraft {
        final String tsid;
        final long eventTime;
        final String eventId;
        final List<EventItem> items;
        // an upper bound of the Avro encoding: strings and bytes plus a length varint each
        long encoded;
        long payloadDigest = Fnv64.OFFSET;

        EventDraft(String namespace, String tsid, long eventTime, String eventId, int items) {
            this.tsid = tsid;
            this.eventTime = eventTime;
            this.eventId = eventId;
            this.items = new ArrayList<>(items);
            this.encoded = 64L + utf8Length(namespace) + utf8Length(tsid) + utf8Length(eventId);
        }

        void add(String key, byte[] value) {
            items.add(new EventItem(key, ByteBuffer.wrap(value)));
            byte[] keyBytes = key.getBytes(StandardCharsets.UTF_8);
            encoded += 10L + keyBytes.length + value.length;
            payloadDigest = fnv(fnv(fnv(fnv(payloadDigest, keyBytes), SEPARATOR), value), SEPARATOR);
        }
    }

    private byte[] base64(JsonNode item, String path) {
        JsonNode v = item.get("eventItemValue");
        if (v == null || v.isNull()) {
            throw new ServiceException(ErrorCode.MISSING_FIELD, path + " is required", path);
        }
        if (!v.isTextual()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " must be a base64 string", path);
        }
        return base64(v.asText(), path);
    }

    private byte[] base64(String s, String path) {
        if ((long) s.length() * 3 / 4 > maxValueBytes + 3) {
            throw new ServiceException(
                    ErrorCode.VALUE_TOO_LARGE, path + " is larger than " + maxValueBytes + " bytes", path);
        }
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(s);
        } catch (IllegalArgumentException e) {
            throw new ServiceException(
                    ErrorCode.INVALID_BASE64, path + " is not valid base64: " + e.getMessage(), path);
        }
        if (bytes.length > maxValueBytes) {
            throw new ServiceException(
                    ErrorCode.VALUE_TOO_LARGE, path + " is larger than " + maxValueBytes + " bytes", path);
        }
        return bytes;
    }

    /** A value the namespace indexes must be one Elasticsearch stores as the field's type. */
    private static void checkMapped(NamespaceConfig ns, String key, byte[] value, String path) {
        if (!ns.index().enabled()) {
            return;
        }
        FieldType type = ns.index().fieldMapping().get(key);
        if (type == null) {
            return;
        }
        String why = FieldValues.whyNot(type, new String(value, StandardCharsets.UTF_8));
        if (why != null) {
            throw new ServiceException(
                    ErrorCode.INVALID_FIELD_VALUE,
                    path + " (item '" + key + "', indexed as " + type + ") is not a value of its type: " + why,
                    path);
        }
    }

    private void checkWindow(NamespaceConfig ns, long eventTimeMicros, long nowMicros, String field) {
        if (!ns.accepts(eventTimeMicros, nowMicros)) {
            throw new ServiceException(
                    ErrorCode.OUTSIDE_ACCEPT_WINDOW,
                    field + " " + Instant.EPOCH.plusNanos(eventTimeMicros * 1000)
                            + " is outside the accept window of namespace '" + ns.name() + "' (from now - "
                            + ns.acceptLimit().toMillis()
                            + " ms to now + " + AcceptWindow.FUTURE_SKEW.toMillis()
                            + " ms); data behind the window is immutable",
                    field);
        }
    }

    private static final byte[] SEPARATOR = {0};

    private static long utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static long digest(String s) {
        return Fnv64.of(s);
    }

    private static long fnv(long h, byte[] bytes) {
        return Fnv64.add(h, bytes);
    }
}
