package io.tally.gateway.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.model.elasticsearch.DocumentFields;
import io.tally.model.elasticsearch.IndexNames;
import io.tally.namespace.NamespaceConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * SearchEventRecords and AggregateEventRecords on the namespace's Elasticsearch alias. A search is
 * a tree of {@link Criterion} over the namespace's mapped fields, with values already of the mapped
 * type; it becomes Elasticsearch's query DSL built as a JSON tree, never as text. Results are
 * eventually consistent (the index refreshes every refresh_interval).
 */
public final class EventSearchQueries {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One node of a search: a field equal to a value, in a range, or a conjunction/disjunction. */
    public sealed interface Criterion permits Equals, Range, AllOf, AnyOf {}

    public record Equals(String field, Object value) implements Criterion {}

    /** A range's side; inclusive or not. */
    public record Bound(Object value, boolean inclusive) {}

    /** Either bound may be null (open on that side). */
    public record Range(String field, Bound lower, Bound upper) implements Criterion {}

    public record AllOf(List<Criterion> parts) implements Criterion {}

    public record AnyOf(List<Criterion> parts) implements Criterion {}

    /** Events of {@code [startMicros, endMicros)} matching {@code criterion} (null: all), newest first. */
    public record SearchQuery(
            NamespaceConfig namespace,
            long startMicros,
            long endMicros,
            Criterion criterion,
            int pageSize,
            long totalRecordLimit,
            String pageToken) {}

    /** The most frequent values of {@code field} among the matching events. */
    public record DistinctQuery(
            NamespaceConfig namespace, long startMicros, long endMicros, Criterion criterion, String field, int size) {}

    /** An indexed event: its mapped items as Elasticsearch holds them (text). */
    public record Hit(String timeSeriesId, long timeMicros, String eventId, List<Map.Entry<String, String>> items) {}

    public record SearchPage(List<Hit> events, String nextPageToken) {}

    public record ValueCount(String value, long count) {}

    public record Distinct(String field, List<ValueCount> values) {}

    /** Elasticsearch's _search on an alias: the request's DSL in, the response out. */
    public interface SearchBackend {
        /** The parsed response; an empty object when the alias does not exist yet (nothing indexed). */
        JsonNode search(String alias, ObjectNode request);
    }

    private final SearchBackend backend;
    private final PageTokens tokens;

    public EventSearchQueries(SearchBackend backend, PageTokens tokens) {
        this.backend = backend;
        this.tokens = tokens;
    }

    public SearchPage search(SearchQuery q) {
        NamespaceConfig ns = indexed(q.namespace());
        ObjectNode query = query(q.startMicros(), q.endMicros(), q.criterion());
        long digest = Fnv64.of(ns.name() + "\u0000" + query);
        PageTokens.Cursor cursor = q.pageToken() == null ? null : tokens.decode(q.pageToken(), digest);
        long before = cursor == null ? 0 : cursor.returned();
        int want = (int) Math.min(q.pageSize(), q.totalRecordLimit() - before);
        if (want <= 0) {
            return new SearchPage(List.of(), null);
        }
        ObjectNode req = JSON.createObjectNode().put("size", want + 1).put("track_total_hits", false);
        req.set("query", query);
        ArrayNode sort = req.putArray("sort");
        sort.addObject().putObject(DocumentFields.EVENT_TIME_US).put("order", "desc");
        sort.addObject().putObject(DocumentFields.EVENT_ID).put("order", "asc");
        if (cursor != null) {
            req.putArray("search_after").add(cursor.eventTimeMicros()).add(cursor.eventId());
        }
        JsonNode hits =
                backend.search(IndexNames.alias(ns.name()), req).path("hits").path("hits");
        int n = Math.min(hits.size(), want);
        List<Hit> events = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            JsonNode src = hits.get(i).path("_source");
            List<Map.Entry<String, String>> items = new ArrayList<>();
            for (String f : ns.index().fieldMapping().keySet()) {
                if (src.has(f)) {
                    items.add(Map.entry(f, src.get(f).asText()));
                }
            }
            events.add(new Hit(
                    src.path(DocumentFields.TIME_SERIES_ID).asText(),
                    src.path(DocumentFields.EVENT_TIME_US).asLong(),
                    src.path(DocumentFields.EVENT_ID).asText(),
                    items));
        }
        String next = null;
        if (hits.size() > want && before + n < q.totalRecordLimit() && n > 0) {
            Hit last = events.get(n - 1);
            next = tokens.encode(new PageTokens.Cursor(last.timeMicros(), last.eventId(), before + n), digest);
        }
        return new SearchPage(events, next);
    }

    public Distinct distinct(DistinctQuery q) {
        NamespaceConfig ns = indexed(q.namespace());
        ObjectNode req = JSON.createObjectNode().put("size", 0);
        req.set("query", query(q.startMicros(), q.endMicros(), q.criterion()));
        req.putObject("aggs")
                .putObject("distinct")
                .putObject("terms")
                .put("field", q.field())
                .put("size", q.size());
        JsonNode buckets = backend.search(IndexNames.alias(ns.name()), req)
                .path("aggregations")
                .path("distinct")
                .path("buckets");
        List<ValueCount> values = new ArrayList<>();
        for (JsonNode b : buckets) {
            String text = b.has("key_as_string")
                    ? b.get("key_as_string").asText()
                    : b.path("key").asText();
            values.add(new ValueCount(text, b.path("doc_count").asLong()));
        }
        return new Distinct(q.field(), values);
    }

    /** The namespace, if it is indexed; else 400 INDEX_DISABLED (searches need its index). */
    public static NamespaceConfig indexed(NamespaceConfig ns) {
        if (!ns.index().enabled()) {
            throw new ServiceException(
                    ErrorCode.INDEX_DISABLED, "namespace '" + ns.name() + "' is not indexed", "namespace");
        }
        return ns;
    }

    /** The interval AND the criterion (if any). */
    static ObjectNode query(long startMicros, long endMicros, Criterion criterion) {
        if (endMicros <= startMicros) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, "timeInterval must have start < end", "timeInterval");
        }
        ObjectNode q = JSON.createObjectNode();
        ArrayNode filter = q.putObject("bool").putArray("filter");
        filter.addObject()
                .putObject("range")
                .putObject(DocumentFields.EVENT_TIME_US)
                .put("gte", startMicros)
                .put("lt", endMicros);
        if (criterion != null) {
            filter.add(dsl(criterion));
        }
        return q;
    }

    private static ObjectNode dsl(Criterion c) {
        ObjectNode out = JSON.createObjectNode();
        if (c instanceof Equals e) {
            out.putObject("term").set(e.field(), JSON.valueToTree(e.value()));
        } else if (c instanceof Range r) {
            ObjectNode bounds = out.putObject("range").putObject(r.field());
            if (r.lower() != null) {
                bounds.set(
                        r.lower().inclusive() ? "gte" : "gt",
                        JSON.valueToTree(r.lower().value()));
            }
            if (r.upper() != null) {
                bounds.set(
                        r.upper().inclusive() ? "lte" : "lt",
                        JSON.valueToTree(r.upper().value()));
            }
        } else if (c instanceof AllOf a) {
            ArrayNode list = out.putObject("bool").putArray("filter");
            a.parts().forEach(p -> list.add(dsl(p)));
        } else if (c instanceof AnyOf a) {
            ObjectNode bool = out.putObject("bool");
            ArrayNode list = bool.putArray("should");
            a.parts().forEach(p -> list.add(dsl(p)));
            bool.put("minimum_should_match", 1);
        }
        return out;
    }
}
