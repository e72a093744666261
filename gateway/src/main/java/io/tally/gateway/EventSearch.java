package io.tally.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.service.Fnv64;
import io.tally.gateway.service.NamespaceResolver;
import io.tally.gateway.service.PageTokens;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.ServiceException.Kind;
import io.tally.model.elasticsearch.DocumentFields;
import io.tally.namespace.FieldValues;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfig.FieldType;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;

/**
 * SearchEventRecords and AggregateEventRecords on the namespace's Elasticsearch alias. The
 * article's searchQuery (equals, range, booleanQuery with AND/OR, nested) becomes an
 * Elasticsearch query built as a JSON tree, never as text, over the namespace's mapped fields
 * only; values are base64 as in the API and converted to the mapped type. Results are
 * eventually consistent (the index refreshes every refresh_interval).
 */
final class EventSearch {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_DEPTH = 8;
    /** Criteria in one searchQuery: below Elasticsearch's 1,024 boolean clauses, which it refuses above. */
    static final int MAX_CRITERIA = 1000;

    private final NamespaceResolver namespaces;
    private final PageTokens tokens;
    private final String elasticsearch;
    private final int maxPage;
    private final int maxIdLength;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    EventSearch(NamespaceResolver namespaces, PageTokens tokens, GatewayConfig config) {
        this.namespaces = namespaces;
        this.tokens = tokens;
        this.elasticsearch = config.get(GatewayConfig.ELASTICSEARCH);
        this.maxPage = config.intOf(GatewayConfig.MAX_PAGE);
        this.maxIdLength = config.intOf(GatewayConfig.MAX_ID);
    }

    ObjectNode search(JsonNode body) {
        RequestJson.object(body, "body");
        NamespaceConfig ns = indexed(body);
        ObjectNode query = query(ns, body);
        int pageSize = (int) RequestJson.boundedInteger(body, "pageSize", 100, 1, maxPage);
        long totalLimit = RequestJson.boundedInteger(body, "totalRecordLimit", 1000, 1, 1_000_000);
        long digest = Fnv64.of(ns.name() + "\u0000" + query);
        PageTokens.Cursor cursor = body.hasNonNull("pageToken")
                ? tokens.decode(RequestJson.text(body, "pageToken", "pageToken", 4096), digest)
                : null;
        long before = cursor == null ? 0 : cursor.returned();
        int want = (int) Math.min(pageSize, totalLimit - before);
        ObjectNode req = JSON.createObjectNode().put("size", want + 1).put("track_total_hits", false);
        req.set("query", query);
        ArrayNode sort = req.putArray("sort");
        sort.addObject().putObject(DocumentFields.EVENT_TIME_US).put("order", "desc");
        sort.addObject().putObject(DocumentFields.EVENT_ID).put("order", "asc");
        if (cursor != null) {
            req.putArray("search_after").add(cursor.eventTimeMicros()).add(cursor.eventId());
        }
        JsonNode hits = post(ns, req).path("hits").path("hits");
        ObjectNode reply = JSON.createObjectNode();
        ArrayNode events = reply.putArray("events");
        int n = Math.min(hits.size(), want);
        for (int i = 0; i < n; i++) {
            JsonNode src = hits.get(i).path("_source");
            ObjectNode ev = events.addObject()
                    .put("timeSeriesId", src.path(DocumentFields.TIME_SERIES_ID).asText())
                    .put(
                            "eventTime",
                            Instant.EPOCH
                                    .plusNanos(src.path(DocumentFields.EVENT_TIME_US)
                                                    .asLong()
                                            * 1000)
                                    .toString())
                    .put("eventId", src.path(DocumentFields.EVENT_ID).asText());
            ArrayNode items = ev.putArray("eventItems");
            ns.index().fieldMapping().keySet().forEach(f -> {
                if (src.has(f)) {
                    items.addObject()
                            .put("eventItemKey", f)
                            .put(
                                    "eventItemValue",
                                    Base64.getEncoder()
                                            .encodeToString(src.get(f).asText().getBytes(StandardCharsets.UTF_8)));
                }
            });
        }
        if (hits.size() > want && before + n < totalLimit && n > 0) {
            JsonNode last = hits.get(n - 1).path("_source");
            reply.put(
                    "nextPageToken",
                    tokens.encode(
                            new PageTokens.Cursor(
                                    last.path(DocumentFields.EVENT_TIME_US).asLong(),
                                    last.path(DocumentFields.EVENT_ID).asText(),
                                    before + n),
                            digest));
        }
        return reply;
    }

    ObjectNode aggregate(JsonNode body) {
        RequestJson.object(body, "body");
        NamespaceConfig ns = indexed(body);
        JsonNode distinct = RequestJson.object(
                RequestJson.object(
                                RequestJson.required(body, "aggregationQuery", "aggregationQuery"), "aggregationQuery")
                        .get("distinct"),
                "aggregationQuery.distinct");
        String key = RequestJson.text(distinct, "eventItemKey", "aggregationQuery.distinct.eventItemKey", 64);
        field(ns, key, "aggregationQuery.distinct.eventItemKey");
        int size = (int) RequestJson.boundedInteger(distinct, "pageSize", 100, 1, maxPage);
        ObjectNode req = JSON.createObjectNode().put("size", 0);
        req.set("query", query(ns, body));
        req.putObject("aggs")
                .putObject("distinct")
                .putObject("terms")
                .put("field", key)
                .put("size", size);
        JsonNode buckets = post(ns, req).path("aggregations").path("distinct").path("buckets");
        ObjectNode reply = JSON.createObjectNode();
        ObjectNode d = reply.putObject("distinct").put("eventItemKey", key);
        ArrayNode values = d.putArray("values");
        for (JsonNode b : buckets) {
            String text = b.has("key_as_string")
                    ? b.get("key_as_string").asText()
                    : b.get("key").asText();
            values.addObject()
                    .put("eventItemValue", Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8)))
                    .put("count", b.get("doc_count").asLong());
        }
        return reply;
    }

    private NamespaceConfig indexed(JsonNode body) {
        NamespaceConfig ns = RequestJson.namespace(body, namespaces, NamespaceConfig.Kind.TIMESERIES, maxIdLength);
        if (!ns.index().enabled()) {
            throw ServiceException.invalid(
                    "INDEX_DISABLED", "namespace '" + ns.name() + "' is not indexed", "namespace");
        }
        return ns;
    }

    /** timeInterval (required) AND the searchQuery (optional). */
    private ObjectNode query(NamespaceConfig ns, JsonNode body) {
        JsonNode interval =
                RequestJson.object(RequestJson.required(body, "timeInterval", "timeInterval"), "timeInterval");
        long start = RequestJson.instantMicros(interval, "start", "timeInterval.start");
        long end = RequestJson.instantMicros(interval, "end", "timeInterval.end");
        if (end <= start) {
            throw ServiceException.invalid("INVALID_FIELD", "timeInterval must have start < end", "timeInterval");
        }
        ObjectNode q = JSON.createObjectNode();
        ArrayNode filter = q.putObject("bool").putArray("filter");
        filter.addObject()
                .putObject("range")
                .putObject(DocumentFields.EVENT_TIME_US)
                .put("gte", start)
                .put("lt", end);
        if (body.hasNonNull("searchQuery")) {
            filter.add(criterion(ns, body.get("searchQuery"), "searchQuery", 0, new int[1]));
        }
        return q;
    }

    private ObjectNode criterion(NamespaceConfig ns, JsonNode c, String path, int depth, int[] criteria) {
        RequestJson.object(c, path);
        if (depth > MAX_DEPTH) {
            throw ServiceException.invalid("INVALID_FIELD", path + " nests deeper than " + MAX_DEPTH, path);
        }
        if (++criteria[0] > MAX_CRITERIA) {
            throw ServiceException.invalid(
                    "TOO_MANY_CRITERIA",
                    "searchQuery holds more than " + MAX_CRITERIA
                            + " criteria (Elasticsearch refuses a query past 1,024" + " clauses)",
                    "searchQuery");
        }
        if (c.size() != 1) {
            throw ServiceException.invalid(
                    "INVALID_FIELD", path + " must hold exactly one of equals, range, booleanQuery", path);
        }
        ObjectNode out = JSON.createObjectNode();
        if (c.has("equals")) {
            JsonNode e = RequestJson.object(c.get("equals"), path + ".equals");
            String key = RequestJson.text(e, "eventItemKey", path + ".equals.eventItemKey", 64);
            FieldType type = field(ns, key, path + ".equals.eventItemKey");
            out.putObject("term").set(key, JSON.valueToTree(value(e, type, path + ".equals.eventItemValue")));
        } else if (c.has("range")) {
            JsonNode r = RequestJson.object(c.get("range"), path + ".range");
            String key = RequestJson.text(r, "eventItemKey", path + ".range.eventItemKey", 64);
            FieldType type = field(ns, key, path + ".range.eventItemKey");
            ObjectNode bounds = out.putObject("range").putObject(key);
            for (String side : new String[] {"lowerBound", "upperBound"}) {
                if (!r.hasNonNull(side)) {
                    continue;
                }
                JsonNode b = RequestJson.object(r.get(side), path + ".range." + side);
                boolean inclusive = b.path("inclusive").asBoolean(false);
                String op = side.equals("lowerBound") ? (inclusive ? "gte" : "gt") : (inclusive ? "lte" : "lt");
                bounds.set(op, JSON.valueToTree(value(b, type, path + ".range." + side + ".eventItemValue")));
            }
        } else if (c.has("booleanQuery")) {
            JsonNode b = RequestJson.object(c.get("booleanQuery"), path + ".booleanQuery");
            JsonNode parts = RequestJson.array(b, "searchQuery", path + ".booleanQuery.searchQuery");
            String operator = b.path("operator").asText("AND");
            if (!operator.equals("AND") && !operator.equals("OR")) {
                throw ServiceException.invalid(
                        "INVALID_FIELD", "operator must be AND or OR", path + ".booleanQuery.operator");
            }
            ObjectNode bool = out.putObject("bool");
            ArrayNode list = bool.putArray(operator.equals("AND") ? "filter" : "should");
            for (int i = 0; i < parts.size(); i++) {
                list.add(criterion(
                        ns, parts.get(i), path + ".booleanQuery.searchQuery[" + i + "]", depth + 1, criteria));
            }
            if (operator.equals("OR")) {
                bool.put("minimum_should_match", 1);
            }
        } else {
            throw ServiceException.invalid("INVALID_FIELD", path + " must be one of equals, range, booleanQuery", path);
        }
        return out;
    }

    private static FieldType field(NamespaceConfig ns, String key, String path) {
        FieldType type = ns.index().fieldMapping().get(key);
        if (type == null) {
            throw ServiceException.invalid(
                    "UNMAPPED_FIELD",
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
            throw ServiceException.invalid("INVALID_BASE64", path + " is not valid base64", path);
        }
        Object v = FieldValues.convert(type, text);
        if (v == null) {
            throw ServiceException.invalid("INVALID_FIELD", path + " '" + text + "' is not a " + type, path);
        }
        return v;
    }

    private JsonNode post(NamespaceConfig ns, ObjectNode request) {
        HttpRequest req = HttpRequest.newBuilder(URI.create(elasticsearch + "/tally-" + ns.name() + "/_search"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(request.toString()))
                .build();
        try {
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 404) {
                return JSON.createObjectNode(); // nothing indexed yet: no alias
            }
            if (r.statusCode() / 100 != 2) {
                throw new ServiceException(
                        Kind.UNAVAILABLE,
                        "ELASTICSEARCH_UNAVAILABLE",
                        "Elasticsearch answered HTTP " + r.statusCode(),
                        null);
            }
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new ServiceException(
                    Kind.UNAVAILABLE,
                    "ELASTICSEARCH_UNAVAILABLE",
                    "Elasticsearch is unreachable: " + e.getMessage(),
                    null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServiceException(Kind.UNAVAILABLE, "ELASTICSEARCH_UNAVAILABLE", "interrupted", null);
        }
    }
}
