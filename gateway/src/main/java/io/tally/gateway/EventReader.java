package io.tally.gateway;

import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.service.Fnv64;
import io.tally.gateway.service.NamespaceResolver;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.ServiceException.Kind;
import io.tally.model.cassandra.SliceTable;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceName;
import io.tally.namespace.TimeSlicePlanner;
import io.tally.namespace.TimeSlicePlanner.Slice;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * ReadEventRecords: a scatter-gather over the slices, time buckets and event buckets that
 * cover the interval, newest time bucket first; the event buckets of one time bucket are read
 * in parallel and merged newest first (event_time DESC, event_id ASC). Every statement is
 * prepared with bound values; keyspace and table names come only from validated namespace
 * names and the planner.
 */
final class EventReader {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long MAX_INTERVAL_MICROS = 400L * 86_400_000_000L;

    /** An event as stored, with its items in key order. */
    record Event(long timeMicros, String eventId, List<Map.Entry<String, byte[]>> items) {}

    private final NamespaceResolver namespaces;
    private final CassandraSession cassandra;
    private final PageTokens tokens;
    private final int maxPage;
    private final int maxIdLength;
    private final Map<String, PreparedStatement> statements = new ConcurrentHashMap<>();
    private final ExecutorService partitions = Executors.newFixedThreadPool(8, r -> {
        Thread t = new Thread(r, "partition-read");
        t.setDaemon(true);
        return t;
    });
    /** Time buckets of a scan; each fans out to its event buckets on the partition pool. */
    private final ExecutorService buckets = Executors.newFixedThreadPool(4, r -> {
        Thread t = new Thread(r, "bucket-read");
        t.setDaemon(true);
        return t;
    });

    EventReader(NamespaceResolver namespaces, CassandraSession cassandra, PageTokens tokens, GatewayConfig config) {
        this.namespaces = namespaces;
        this.cassandra = cassandra;
        this.tokens = tokens;
        this.maxPage = config.intOf(GatewayConfig.MAX_PAGE);
        this.maxIdLength = config.intOf(GatewayConfig.MAX_ID);
    }

    ObjectNode read(JsonNode body) {
        RequestJson.object(body, "body");
        NamespaceConfig ns = RequestJson.namespace(body, namespaces, NamespaceConfig.Kind.TIMESERIES, maxIdLength);
        String tsid = RequestJson.text(body, "timeSeriesId", "timeSeriesId", maxIdLength);
        JsonNode interval =
                RequestJson.object(RequestJson.required(body, "timeInterval", "timeInterval"), "timeInterval");
        long start = RequestJson.instantMicros(interval, "start", "timeInterval.start");
        long end = RequestJson.instantMicros(interval, "end", "timeInterval.end");
        if (end <= start || end - start > MAX_INTERVAL_MICROS) {
            throw ServiceException.invalid(
                    "INVALID_FIELD", "timeInterval must have start < end and span at most 400 days", "timeInterval");
        }
        List<Map.Entry<String, byte[]>> filters = filters(body);
        int pageSize = (int) RequestJson.boundedInteger(body, "pageSize", 100, 1, maxPage);
        long totalLimit = RequestJson.boundedInteger(body, "totalRecordLimit", 1000, 1, 1_000_000);
        long digest = queryDigest(ns.name(), tsid, start, end, filters);
        PageTokens.Cursor cursor = body.hasNonNull("pageToken")
                ? tokens.decode(RequestJson.text(body, "pageToken", "pageToken", 4096), digest)
                : null;
        long returnedBefore = cursor == null ? 0 : cursor.returned();
        int want = (int) Math.min(pageSize, totalLimit - returnedBefore);

        List<Event> page = new ArrayList<>();
        boolean more = false;
        TimeSlicePlanner planner = new TimeSlicePlanner(ns);
        List<Slice> slices = new ArrayList<>(planner.slicesCovering(start, end));
        Collections.reverse(slices);
        outer:
        for (Slice slice : slices) {
            if (!tableExists(NamespaceName.keyspace(ns.name()), slice.tableName())) {
                continue;
            }
            int[] buckets = planner.timeBucketsOverlapping(slice, start, end);
            for (int i = buckets.length - 1; i >= 0 && want > 0; i--) {
                long lo = Math.max(start, slice.startMicros() + buckets[i] * slice.bucketMicros());
                long hi = Math.min(end - 1, cursor == null ? Long.MAX_VALUE : cursor.eventTimeMicros());
                if (lo > hi) {
                    continue;
                }
                for (Event e : bucket(ns, slice, tsid, buckets[i], lo, hi, slice.bucketsPerId())) {
                    if (cursor != null
                            && (e.timeMicros() > cursor.eventTimeMicros()
                                    || (e.timeMicros() == cursor.eventTimeMicros()
                                            && e.eventId().compareTo(cursor.eventId()) <= 0))) {
                        continue; // at or before the cursor: served on an earlier page
                    }
                    if (!matches(e, filters)) {
                        continue;
                    }
                    if (page.size() == want) {
                        more = true;
                        break outer;
                    }
                    page.add(e);
                }
            }
        }
        ObjectNode reply = JSON.createObjectNode();
        ArrayNode events = reply.putArray("events");
        for (Event e : page) {
            ObjectNode ev = events.addObject()
                    .put("timeSeriesId", tsid)
                    .put(
                            "eventTime",
                            Instant.EPOCH.plusNanos(e.timeMicros() * 1000).toString())
                    .put("eventId", e.eventId());
            ArrayNode items = ev.putArray("eventItems");
            for (Map.Entry<String, byte[]> it : e.items()) {
                items.addObject()
                        .put("eventItemKey", it.getKey())
                        .put("eventItemValue", Base64.getEncoder().encodeToString(it.getValue()));
            }
        }
        long returned = returnedBefore + page.size();
        if (more && returned < totalLimit && !page.isEmpty()) {
            Event last = page.get(page.size() - 1);
            reply.put(
                    "nextPageToken",
                    tokens.encode(new PageTokens.Cursor(last.timeMicros(), last.eventId(), returned), digest));
        }
        return reply;
    }

    /** The events of one time bucket, from all its event buckets in parallel, newest first. */
    private List<Event> bucket(
            NamespaceConfig ns, Slice slice, String tsid, int timeBucket, long lo, long hi, int eventBuckets) {
        String keyspace = NamespaceName.keyspace(ns.name());
        PreparedStatement ps = statements.computeIfAbsent(
                keyspace + "." + slice.tableName(),
                t -> cassandra.get().prepare(SliceTable.selectRange(keyspace, slice.tableName())));
        List<CompletableFuture<List<Row>>> reads = new ArrayList<>();
        for (int b = 0; b < eventBuckets; b++) {
            int eb = b;
            reads.add(CompletableFuture.supplyAsync(
                    () -> cassandra
                            .get()
                            .execute(ps.bind(tsid, timeBucket, eb, lo, hi))
                            .all(),
                    partitions));
        }
        TreeMap<String, Event> byKey = new TreeMap<>();
        try {
            for (CompletableFuture<List<Row>> f : reads) {
                for (Row r : f.join()) {
                    long t = r.getLong("event_time");
                    String id = r.getString("event_id");
                    Event e = byKey.computeIfAbsent(
                            String.format("%020d/%s", Long.MAX_VALUE - t, id),
                            k -> new Event(t, id, new ArrayList<>()));
                    String itemKey = r.getString("event_item_key");
                    if (!itemKey.isEmpty()) { // "" marks an event stored without items
                        ByteBuffer v = r.getByteBuffer("event_item_value");
                        byte[] bytes = new byte[v == null ? 0 : v.remaining()];
                        if (v != null) {
                            v.duplicate().get(bytes);
                        }
                        e.items().add(Map.entry(itemKey, bytes));
                    }
                }
            }
        } catch (java.util.concurrent.CompletionException e) {
            throw new ServiceException(
                    Kind.UNAVAILABLE,
                    "CASSANDRA_UNAVAILABLE",
                    "a partition read failed: " + e.getCause().getMessage(),
                    null);
        }
        List<Event> out = new ArrayList<>(byKey.values());
        out.forEach(e -> e.items().sort(Map.Entry.comparingByKey()));
        out.sort(Comparator.comparingLong(Event::timeMicros).reversed().thenComparing(Event::eventId));
        return out;
    }

    /**
     * Every stored event of one id with from <= event_time < to, in no order: all slices x time
     * buckets x event buckets read in parallel (the ACCURATE counter read and the recount).
     */
    List<Event> scan(NamespaceConfig ns, String tsid, long from, long to) {
        TimeSlicePlanner planner = new TimeSlicePlanner(ns);
        List<CompletableFuture<List<Event>>> reads = new ArrayList<>();
        for (Slice slice : planner.slicesCovering(from, to)) {
            if (!tableExists(NamespaceName.keyspace(ns.name()), slice.tableName())) {
                continue;
            }
            for (int bucket : planner.timeBucketsOverlapping(slice, from, to)) {
                long lo = Math.max(from, slice.startMicros() + bucket * slice.bucketMicros());
                reads.add(CompletableFuture.supplyAsync(
                        () -> bucket(ns, slice, tsid, bucket, lo, to - 1, slice.bucketsPerId()), buckets));
            }
        }
        List<Event> out = new ArrayList<>();
        try {
            reads.forEach(f -> out.addAll(f.join()));
        } catch (java.util.concurrent.CompletionException e) {
            throw e.getCause() instanceof ServiceException a
                    ? a
                    : new ServiceException(
                            Kind.UNAVAILABLE,
                            "CASSANDRA_UNAVAILABLE",
                            "a bucket read failed: " + e.getCause().getMessage(),
                            null);
        }
        return out;
    }

    private boolean tableExists(String keyspace, String table) {
        return cassandra
                .get()
                .getMetadata()
                .getKeyspace(keyspace)
                .flatMap(k -> k.getTable(table))
                .isPresent();
    }

    private static boolean matches(Event e, List<Map.Entry<String, byte[]>> filters) {
        for (Map.Entry<String, byte[]> f : filters) {
            boolean hit = e.items().stream()
                    .anyMatch(it -> it.getKey().equals(f.getKey()) && Arrays.equals(it.getValue(), f.getValue()));
            if (!hit) {
                return false;
            }
        }
        return true;
    }

    private List<Map.Entry<String, byte[]>> filters(JsonNode body) {
        List<Map.Entry<String, byte[]>> out = new ArrayList<>();
        JsonNode fs = body.get("eventFilters");
        if (fs == null || fs.isNull()) {
            return out;
        }
        if (!fs.isArray()) {
            throw ServiceException.invalid("INVALID_FIELD", "eventFilters must be an array", "eventFilters");
        }
        for (int i = 0; i < fs.size(); i++) {
            String p = "eventFilters[" + i + "]";
            JsonNode f = RequestJson.object(fs.get(i), p);
            String key = RequestJson.text(f, "matchEventItemKey", p + ".matchEventItemKey", maxIdLength);
            String value = RequestJson.text(f, "matchEventItemValue", p + ".matchEventItemValue", 1 << 20);
            try {
                out.add(Map.entry(key, Base64.getDecoder().decode(value)));
            } catch (IllegalArgumentException e) {
                throw ServiceException.invalid(
                        "INVALID_BASE64", p + ".matchEventItemValue is not valid base64", p + ".matchEventItemValue");
            }
        }
        return out;
    }

    private static long queryDigest(
            String ns, String tsid, long start, long end, List<Map.Entry<String, byte[]>> filters) {
        StringBuilder sb = new StringBuilder(ns)
                .append('\u0000')
                .append(tsid)
                .append('\u0000')
                .append(start)
                .append('\u0000')
                .append(end);
        for (Map.Entry<String, byte[]> f : filters) {
            sb.append('\u0000')
                    .append(f.getKey())
                    .append('=')
                    .append(Base64.getEncoder().encodeToString(f.getValue()));
        }
        return Fnv64.of(sb.toString());
    }

    void close() {
        partitions.shutdownNow();
        buckets.shutdownNow();
        cassandra.close();
    }
}
