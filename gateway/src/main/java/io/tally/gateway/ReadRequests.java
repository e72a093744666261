package io.tally.gateway;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.tally.gateway.service.CounterQueries;
import io.tally.gateway.service.CounterRecount;
import io.tally.gateway.service.ErrorCode;
import io.tally.gateway.service.NamespaceResolver;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.TimeSeriesQueries;
import io.tally.gateway.service.TimeSeriesQueries.ItemFilter;
import io.tally.model.Micros;
import io.tally.namespace.NamespaceConfig;
import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * The read endpoints' JSON (the Counter and TimeSeries articles' shapes) to the query services'
 * requests and their answers back to JSON. Every refusal names the field at fault.
 */
final class ReadRequests {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A counter a request names. */
    record CounterRef(NamespaceConfig namespace, String counter) {}

    private final NamespaceResolver namespaces;
    private final int maxPage;
    private final int maxIdLength;

    ReadRequests(NamespaceResolver namespaces, GatewayConfig config) {
        this.namespaces = namespaces;
        this.maxPage = config.intOf(GatewayConfig.MAX_PAGE);
        this.maxIdLength = config.intOf(GatewayConfig.MAX_ID);
    }

    /** GetCount's body: {namespace, counter_name}. */
    CounterRef counter(JsonNode body) {
        RequestJson.object(body, "body");
        NamespaceConfig ns = RequestJson.namespace(body, namespaces, NamespaceConfig.Kind.COUNTER, maxIdLength);
        return new CounterRef(ns, RequestJson.text(body, "counter_name", "counter_name", maxIdLength));
    }

    /** The same, from a body read as flat string fields (FlatStringFields), checked alike and in the same order. */
    CounterRef counter(String namespace, String counter) {
        NamespaceConfig ns = namespaces.require(
                RequestJson.checkedId(namespace, "namespace", maxIdLength), NamespaceConfig.Kind.COUNTER);
        return new CounterRef(ns, RequestJson.checkedId(counter, "counter_name", maxIdLength));
    }

    /**
     * A count's JSON, {"count", "counter_type", "last_rollup_ts"}, written as bytes: a tree and
     * its serializer cost GetCount more than its lookup. Nothing in it needs escaping: a number, an
     * enum constant's name and an ISO-8601 instant.
     */
    static Buffer count(CounterQueries.Count c) {
        StringBuilder json = new StringBuilder(96)
                .append("{\"count\":")
                .append(c.count())
                .append(",\"counter_type\":\"")
                .append(c.counterType().name())
                .append("\",\"last_rollup_ts\":");
        if (c.lastRollupMicros() > 0) {
            json.append('"').append(instant(c.lastRollupMicros())).append('"');
        } else {
            json.append("null");
        }
        return Buffer.buffer(json.append('}').toString());
    }

    /** Recount's body: {namespace, counter_name, from?, to?, repair?}. */
    CounterRecount.Request recount(JsonNode body) {
        CounterRef ref = counter(body);
        return new CounterRecount.Request(
                ref.namespace(),
                ref.counter(),
                body.hasNonNull("from") ? RequestJson.instantMicros(body, "from", "from") : null,
                body.hasNonNull("to") ? RequestJson.instantMicros(body, "to", "to") : null,
                RequestJson.optionalBoolean(body, "repair", "repair", false));
    }

    static ObjectNode recounted(CounterRecount.Result r) {
        ObjectNode reply = JSON.createObjectNode()
                .put("counter_name", r.counter())
                .put("from", instant(r.fromMicros()))
                .put("to", instant(r.toMicros()))
                .put("last_rollup_ts", instant(r.lastRollupMicros()))
                .put("events", r.events())
                .put("rollup_count", r.rollupCount())
                .put("recounted", r.recounted())
                .put("compared", r.compared())
                .put("repaired", r.repaired())
                .put("log_base", r.logBase());
        if (r.repairEventId() != null) { // the RECOUNT the rollup job applies (the rollup shows it once applied)
            reply.put("repair_event_id", r.repairEventId());
        }
        if (r.difference() != null) {
            reply.put("difference", r.difference());
        } else {
            reply.putNull("difference");
        }
        return reply;
    }

    /** ReadEventRecords' body (the TimeSeries article's shape). */
    TimeSeriesQueries.ReadQuery readEvents(JsonNode body) {
        RequestJson.object(body, "body");
        NamespaceConfig ns = RequestJson.namespace(body, namespaces, NamespaceConfig.Kind.TIMESERIES, maxIdLength);
        String tsid = RequestJson.text(body, "timeSeriesId", "timeSeriesId", maxIdLength);
        JsonNode interval =
                RequestJson.object(RequestJson.required(body, "timeInterval", "timeInterval"), "timeInterval");
        long start = RequestJson.instantMicros(interval, "start", "timeInterval.start");
        long end = RequestJson.instantMicros(interval, "end", "timeInterval.end");
        return new TimeSeriesQueries.ReadQuery(
                ns,
                tsid,
                start,
                end,
                filters(body),
                (int) RequestJson.boundedInteger(body, "pageSize", 100, 1, maxPage),
                RequestJson.boundedInteger(body, "totalRecordLimit", 1000, 1, 1_000_000),
                body.hasNonNull("pageToken") ? RequestJson.text(body, "pageToken", "pageToken", 4096) : null,
                RequestJson.boundedInteger(
                        body, "pageSizeBytes", TimeSeriesQueries.DEFAULT_PAGE_BYTES, 1024, 16L << 20));
    }

    /**
     * A page's JSON, {"events": [...], "nextPageToken"?}, written by Jackson's generator straight
     * into the answer's bytes: a tree of a hundred events and its serializer were a quarter of the
     * gateway's CPU a page served from memory (profile under read_first_page_closed). Item values
     * are base64 with padding, Jackson's default variant, as java.util.Base64's basic encoder writes.
     */
    static Buffer page(String timeSeriesId, TimeSeriesQueries.EventPage page) {
        ByteBuf out = Unpooled.buffer(256 + 128 * page.events().size());
        write(timeSeriesId, page, new ByteBufOutputStream(out));
        return Buffer.buffer(out);
    }

    /** The same as bytes, to keep (a page of the closed past is answered alike each time). */
    static byte[] pageBytes(String timeSeriesId, TimeSeriesQueries.EventPage page) {
        ByteArrayOutputStream out =
                new ByteArrayOutputStream(256 + 128 * page.events().size());
        write(timeSeriesId, page, out);
        return out.toByteArray();
    }

    private static void write(String timeSeriesId, TimeSeriesQueries.EventPage page, OutputStream out) {
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeArrayFieldStart("events");
            for (TimeSeriesQueries.Event e : page.events()) {
                g.writeStartObject();
                g.writeStringField("timeSeriesId", timeSeriesId);
                g.writeStringField("eventTime", instant(e.timeMicros()));
                g.writeStringField("eventId", e.eventId());
                g.writeArrayFieldStart("eventItems");
                for (Map.Entry<String, byte[]> it : e.items()) {
                    g.writeStartObject();
                    g.writeStringField("eventItemKey", it.getKey());
                    g.writeFieldName("eventItemValue");
                    g.writeBinary(it.getValue());
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeEndArray();
            if (page.nextPageToken() != null) {
                g.writeStringField("nextPageToken", page.nextPageToken());
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing a page into memory failed", e);
        }
    }

    private static final JsonFactory FACTORY = new JsonFactory();

    private List<ItemFilter> filters(JsonNode body) {
        List<ItemFilter> out = new ArrayList<>();
        JsonNode fs = body.get("eventFilters");
        if (fs == null || fs.isNull()) {
            return out;
        }
        if (!fs.isArray()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, "eventFilters must be an array", "eventFilters");
        }
        for (int i = 0; i < fs.size(); i++) {
            String p = "eventFilters[" + i + "]";
            JsonNode f = RequestJson.object(fs.get(i), p);
            String key = RequestJson.text(f, "matchEventItemKey", p + ".matchEventItemKey", maxIdLength);
            String value = RequestJson.text(f, "matchEventItemValue", p + ".matchEventItemValue", 1 << 20);
            try {
                out.add(new ItemFilter(key, Base64.getDecoder().decode(value)));
            } catch (IllegalArgumentException e) {
                throw new ServiceException(
                        ErrorCode.INVALID_BASE64,
                        p + ".matchEventItemValue is not valid base64",
                        p + ".matchEventItemValue");
            }
        }
        return out;
    }

    private static String instant(long micros) {
        return Micros.format(micros);
    }
}
