package io.tally.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.service.ErrorCode;
import io.tally.gateway.service.EventSearchQueries;
import io.tally.gateway.service.EventSearchQueries.Criterion;
import io.tally.gateway.service.NamespaceResolver;
import io.tally.gateway.service.ServiceException;
import io.tally.model.Micros;
import io.tally.namespace.FieldValues;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfig.FieldType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * SearchEventRecords' and AggregateEventRecords' JSON (the TimeSeries article's searchQuery:
 * equals, range, booleanQuery with AND/OR, nested) to the search service's criteria, checked
 * against the namespace's field_mapping with base64 values converted to the mapped type; and the
 * answers back to JSON. Every refusal names the field at fault.
 */
final class SearchRequests {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_DEPTH = 8;
    /** Criteria in one searchQuery: below Elasticsearch's 1,024 boolean clauses, which it refuses above. */
    static final int MAX_CRITERIA = 1000;

    private final NamespaceResolver namespaces;
    private final int maxPage;
    private final int maxIdLength;

    SearchRequests(NamespaceResolver namespaces, GatewayConfig config) {
        this.namespaces = namespaces;
        this.maxPage = config.intOf(GatewayConfig.MAX_PAGE);
        this.maxIdLength = config.intOf(GatewayConfig.MAX_ID);
    }

    EventSearchQueries.SearchQuery search(JsonNode body) {
        RequestJson.object(body, "body");
        NamespaceConfig ns = EventSearchQueries.indexed(
                RequestJson.namespace(body, namespaces, NamespaceConfig.Kind.TIMESERIES, maxIdLength));
        long[] interval = interval(body);
        return new EventSearchQueries.SearchQuery(
                ns,
                interval[0],
                interval[1],
                searchQuery(ns, body),
                (int) RequestJson.boundedInteger(body, "pageSize", 100, 1, maxPage),
                RequestJson.boundedInteger(body, "totalRecordLimit", 1000, 1, 1_000_000),
                RequestJson.optionalText(body, "pageToken", "pageToken", 4096));
    }

    EventSearchQueries.DistinctQuery distinct(JsonNode body) {
        RequestJson.object(body, "body");
        NamespaceConfig ns = EventSearchQueries.indexed(
                RequestJson.namespace(body, namespaces, NamespaceConfig.Kind.TIMESERIES, maxIdLength));
        JsonNode distinct = RequestJson.object(
                RequestJson.object(
                                RequestJson.required(body, "aggregationQuery", "aggregationQuery"), "aggregationQuery")
                        .get("distinct"),
                "aggregationQuery.distinct");
        String key = RequestJson.text(distinct, "eventItemKey", "aggregationQuery.distinct.eventItemKey", 64);
        field(ns, key, "aggregationQuery.distinct.eventItemKey");
        long[] interval = interval(body);
        return new EventSearchQueries.DistinctQuery(
                ns, interval[0], interval[1], searchQuery(ns, body), key, (int) RequestJson.boundedInteger(
                        distinct, "pageSize", "aggregationQuery.distinct.pageSize", 100, 1, maxPage));
    }

    static ObjectNode page(EventSearchQueries.SearchPage page) {
        ObjectNode reply = JSON.createObjectNode();
        ArrayNode events = reply.putArray("events");
        for (EventSearchQueries.Hit h : page.events()) {
            ObjectNode ev = events.addObject()
                    .put("timeSeriesId", h.timeSeriesId())
                    .put("eventTime", Micros.format(h.timeMicros()))
                    .put("eventId", h.eventId());
            ArrayNode items = ev.putArray("eventItems");
            for (Map.Entry<String, String> it : h.items()) {
                items.addObject().put("eventItemKey", it.getKey()).put("eventItemValue", base64(it.getValue()));
            }
        }
        if (page.nextPageToken() != null) {
            reply.put("nextPageToken", page.nextPageToken());
        }
        return reply;
    }

    static ObjectNode distinct(EventSearchQueries.Distinct d) {
        ObjectNode reply = JSON.createObjectNode();
        ArrayNode values =
                reply.putObject("distinct").put("eventItemKey", d.field()).putArray("values");
        for (EventSearchQueries.ValueCount v : d.values()) {
            values.addObject().put("eventItemValue", base64(v.value())).put("count", v.count());
        }
        return reply;
    }

    /** timeInterval {start, end}, required (start < end is the service's rule). */
    private static long[] interval(JsonNode body) {
        JsonNode interval =
                RequestJson.object(RequestJson.required(body, "timeInterval", "timeInterval"), "timeInterval");
        return new long[] {
            RequestJson.instantMicros(interval, "start", "timeInterval.start"),
            RequestJson.instantMicros(interval, "end", "timeInterval.end")
        };
    }

    private static Criterion searchQuery(NamespaceConfig ns, JsonNode body) {
        return body.hasNonNull("searchQuery")
                ? criterion(ns, body.get("searchQuery"), "searchQuery", 0, new int[1])
                : null;
    }

    private static Criterion criterion(NamespaceConfig ns, JsonNode c, String path, int depth, int[] criteria) {
        RequestJson.object(c, path);
        if (depth > MAX_DEPTH) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " nests deeper than " + MAX_DEPTH, path);
        }
        if (++criteria[0] > MAX_CRITERIA) {
            throw new ServiceException(
                    ErrorCode.TOO_MANY_CRITERIA,
                    "searchQuery holds more than " + MAX_CRITERIA
                            + " criteria (Elasticsearch refuses a query past 1,024 clauses)",
                    "searchQuery");
        }
        if (c.size() != 1) {
            throw new ServiceException(
                    ErrorCode.INVALID_FIELD, path + " must hold exactly one of equals, range, booleanQuery", path);
        }
        if (c.has("equals")) {
            JsonNode e = RequestJson.object(c.get("equals"), path + ".equals");
            String key = RequestJson.text(e, "eventItemKey", path + ".equals.eventItemKey", 64);
            FieldType type = field(ns, key, path + ".equals.eventItemKey");
            return new EventSearchQueries.Equals(key, value(e, type, path + ".equals.eventItemValue"));
        }
        if (c.has("range")) {
            JsonNode r = RequestJson.object(c.get("range"), path + ".range");
            String key = RequestJson.text(r, "eventItemKey", path + ".range.eventItemKey", 64);
            FieldType type = field(ns, key, path + ".range.eventItemKey");
            return new EventSearchQueries.Range(
                    key, bound(r, "lowerBound", type, path), bound(r, "upperBound", type, path));
        }
        if (c.has("booleanQuery")) {
            JsonNode b = RequestJson.object(c.get("booleanQuery"), path + ".booleanQuery");
            JsonNode parts = RequestJson.array(b, "searchQuery", path + ".booleanQuery.searchQuery");
            String operator = b.hasNonNull("operator")
                    ? RequestJson.text(b, "operator", path + ".booleanQuery.operator", 64)
                    : "AND";
            if (!operator.equals("AND") && !operator.equals("OR")) {
                throw new ServiceException(
                        ErrorCode.INVALID_FIELD, "operator must be AND or OR", path + ".booleanQuery.operator");
            }
            List<Criterion> list = new ArrayList<>();
            for (int i = 0; i < parts.size(); i++) {
                list.add(criterion(
                        ns, parts.get(i), path + ".booleanQuery.searchQuery[" + i + "]", depth + 1, criteria));
            }
            return operator.equals("AND") ? new EventSearchQueries.AllOf(list) : new EventSearchQueries.AnyOf(list);
        }
        throw new ServiceException(ErrorCode.INVALID_FIELD, path + " must be one of equals, range, booleanQuery", path);
    }

    private static EventSearchQueries.Bound bound(JsonNode range, String side, FieldType type, String path) {
        if (!range.hasNonNull(side)) {
            return null;
        }
        String at = path + ".range." + side;
        JsonNode b = RequestJson.object(range.get(side), at);
        return new EventSearchQueries.Bound(
                value(b, type, at + ".eventItemValue"),
                RequestJson.optionalBoolean(b, "inclusive", at + ".inclusive", false));
    }

    private static FieldType field(NamespaceConfig ns, String key, String path) {
        FieldType type = ns.index().fieldMapping().get(key);
        if (type == null) {
            throw new ServiceException(
                    ErrorCode.UNMAPPED_FIELD,
                    "'" + key + "' is not in the field_mapping of '" + ns.name() + "' (mapped: "
                            + ns.index().fieldMapping().keySet() + ")",
                    path);
        }
        return type;
    }

    private static Object value(JsonNode node, FieldType type, String path) {
        String b64 = RequestJson.text(node, "eventItemValue", path, 1 << 16);
        String text;
        try {
            text = new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new ServiceException(ErrorCode.INVALID_BASE64, path + " is not valid base64", path);
        }
        Object v = FieldValues.convert(type, text);
        if (v == null) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " '" + text + "' is not a " + type, path);
        }
        return v;
    }

    private static String base64(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }
}
