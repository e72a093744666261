package io.tally.gateway.service;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.type.codec.TypeCodec;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import io.tally.model.cassandra.SliceTable;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceName;
import io.tally.namespace.TimeSlicePlanner;
import io.tally.namespace.TimeSlicePlanner.Slice;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The TimeSeries reads over the stored slices (ReadEventRecords, and the event-log scans of the
 * counter reads): the slices and time buckets that cover the interval, newest first; the event
 * buckets of one time bucket are read asynchronously, a driver page at a time, and merged k-way
 * newest first (event_time DESC, event_id ASC, {@link EventMerge}), so a read stops asking
 * Cassandra for rows once its page is full (the TimeSeries article's adaptive pagination).
 * Every statement is prepared with bound values; keyspace and table names come only from
 * validated namespace names and the planner.
 */
public final class TimeSeriesQueries {
    /** A scan's shared query takes this many rows a partition; a longer partition is read on alone. */
    static final int SCAN_ROWS_PER_PARTITION = 5_000;
    /** The longest interval one read may span. */
    public static final long MAX_INTERVAL_MICROS = 400L * 86_400_000_000L;

    /** An event as stored, with its items in key order. */
    public record Event(long timeMicros, String eventId, List<Map.Entry<String, byte[]>> items) {}

    /** Keep only events with an item of this key and exactly this value. */
    public record ItemFilter(String key, byte[] value) {}

    /**
     * ReadEventRecords: one id's events with start <= event_time < end, newest first.
     *
     * @param pageToken null for the first page, else the nextPageToken of the previous page of the same query
     */
    public record ReadQuery(
            NamespaceConfig namespace,
            String timeSeriesId,
            long startMicros,
            long endMicros,
            List<ItemFilter> filters,
            int pageSize,
            long totalRecordLimit,
            String pageToken,
            long pageSizeBytes) {}

    /** A page's items stop at about this many bytes unless the query says otherwise (the KV article's page_size_bytes). */
    public static final long DEFAULT_PAGE_BYTES = 1 << 20;
    /** More slices than this in one read are refused: planning them alone costs the heap (60 s slices over 400 days are 576,000). */
    public static final int MAX_SLICES = 10_000;

    /**
     * A page of events; nextPageToken is null after the last page. A page may hold fewer events
     * than asked, none even, with a token: the read stopped at its deadline or byte budget (the
     * TimeSeries article's early return) and the token resumes where it stopped.
     */
    public record EventPage(List<Event> events, String nextPageToken) {}

    /**
     * The codec of the IN list of event buckets, named: bound as a plain List the driver inspects
     * the value's generic type on every bind (Guava type resolution, 1-2% of a page by id's CPU).
     */
    private static final TypeCodec<List<Integer>> INT_LIST = TypeCodecs.listOf(TypeCodecs.INT);
    /** 0..n-1 by n: the event buckets of an id, the IN list of its time bucket's first query. */
    private static final Map<Integer, List<Integer>> EVENT_BUCKETS = new ConcurrentHashMap<>();

    private final CassandraSession cassandra;
    private final PageTokens tokens;
    private final Map<String, PreparedStatement> statements = new ConcurrentHashMap<>();
    /** By namespace: how many rows its events take, which sizes a page's first query. */
    private final Map<String, RowsPerEvent> rowsPerEvent = new ConcurrentHashMap<>();
    /** Partition queries in flight across the gateway (each page fetch holds one). */
    private final ItemRows.Permits queries = new ItemRows.Permits(2048);
    /** Time buckets of a scan; each fans out to its event buckets on the partition pool. */
    private final ExecutorService buckets = boundedPool(4, 256, "bucket-read");

    private final long deadlineMillis;
    private final StoredHorizon horizon;
    private final ClosedPageCache closedPages;
    private final java.util.function.Consumer<String> onCache;

    public TimeSeriesQueries(CassandraSession cassandra, PageTokens tokens) {
        this(cassandra, tokens, 2_000);
    }

    /** @param deadlineMillis a read returns what it has (with a token) once it ran this long */
    public TimeSeriesQueries(CassandraSession cassandra, PageTokens tokens, long deadlineMillis) {
        this(
                cassandra,
                tokens,
                deadlineMillis,
                StoredHorizon.NONE,
                new ClosedPageCache(0, 0, System::currentTimeMillis),
                r -> {});
    }

    /**
     * @param horizon how far back stored events are final
     * @param closedPages pages read behind the horizon, served again from memory
     * @param onCache told "hit" or "miss" for each read behind the horizon (the cache's metric)
     */
    public TimeSeriesQueries(
            CassandraSession cassandra,
            PageTokens tokens,
            long deadlineMillis,
            StoredHorizon horizon,
            ClosedPageCache closedPages,
            java.util.function.Consumer<String> onCache) {
        this.cassandra = cassandra;
        this.tokens = tokens;
        this.deadlineMillis = deadlineMillis;
        this.horizon = horizon;
        this.closedPages = closedPages;
        this.onCache = onCache;
    }

    /** A pool whose queue is bounded: when it is full, reads are refused (429), not queued without end. */
    private static ExecutorService boundedPool(int threads, int queue, String name) {
        return new ThreadPoolExecutor(
                threads,
                threads,
                0,
                TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(queue),
                r -> {
                    Thread t = new Thread(r, name);
                    t.setDaemon(true);
                    return t;
                },
                (r, pool) -> {
                    throw new ServiceException(
                            ErrorCode.READ_BACKPRESSURE,
                            "the gateway has too many reads in flight; retry shortly",
                            null);
                });
    }

    private static void checkWidth(NamespaceConfig ns, long start, long end) {
        long shortest = ns.timePartition().secondsPerSlice();
        for (var earlier : ns.partitionHistory()) {
            shortest = Math.min(shortest, earlier.partition().secondsPerSlice());
        }
        if ((end - start) / (shortest * 1_000_000L) + 2 > MAX_SLICES) {
            throw new ServiceException(
                    ErrorCode.READ_TOO_WIDE,
                    "timeInterval covers more than " + MAX_SLICES + " slices of " + shortest
                            + " s; read a narrower interval",
                    "timeInterval");
        }
    }

    /**
     * Where a read starts: its checked interval, its digest, the cursor of its page token, and the
     * key of its page in the cache of closed pages when the page lies behind the horizon (null
     * otherwise). Asks nothing of Cassandra.
     */
    private record Position(long digest, PageTokens.Cursor cursor, ClosedPageCache.Key closedKey) {}

    private Position position(ReadQuery q) {
        NamespaceConfig ns = q.namespace();
        long start = q.startMicros();
        long end = q.endMicros();
        if (end <= start || end - start > MAX_INTERVAL_MICROS) {
            throw new ServiceException(
                    ErrorCode.INVALID_FIELD,
                    "timeInterval must have start < end and span at most 400 days",
                    "timeInterval");
        }
        checkWidth(ns, start, end);
        long digest = queryDigest(ns.name(), q.timeSeriesId(), start, end, q.filters());
        PageTokens.Cursor cursor = q.pageToken() == null ? null : tokens.decode(q.pageToken(), digest);
        // a page whose newest possible event is behind the horizon never changes: served from memory
        long newest = Math.min(end - 1, cursor == null ? Long.MAX_VALUE : cursor.eventTimeMicros());
        ClosedPageCache.Key closedKey = closedPages.enabled() && newest < horizon.finalBeforeMicros(ns)
                ? new ClosedPageCache.Key(
                        ns,
                        q.timeSeriesId(),
                        digest,
                        q.pageToken(),
                        q.pageSize(),
                        q.totalRecordLimit(),
                        q.pageSizeBytes())
                : null;
        return new Position(digest, cursor, closedKey);
    }

    /**
     * The query's page when the cache of closed pages holds it (with the answer remembered beside
     * it, if any), else null. It asks nothing of Cassandra and waits on nothing, so an event loop may
     * call it and answer a hit at once, with no worker thread between (a hit is counted here;
     * {@link #read} counts what it looks up).
     */
    public ClosedPageCache.Kept kept(ReadQuery q) {
        Position at = position(q);
        ClosedPageCache.Kept kept = at.closedKey() == null ? null : closedPages.kept(at.closedKey());
        if (kept != null) {
            onCache.accept("hit");
        }
        return kept;
    }

    public EventPage read(ReadQuery q) {
        NamespaceConfig ns = q.namespace();
        String tsid = q.timeSeriesId();
        long start = q.startMicros();
        long end = q.endMicros();
        Position at = position(q);
        long began = System.nanoTime();
        long bytes = 0;
        List<ItemFilter> filters = q.filters();
        long digest = at.digest();
        PageTokens.Cursor cursor = at.cursor();
        long returnedBefore = cursor == null ? 0 : cursor.returned();
        int want = (int) Math.min(q.pageSize(), q.totalRecordLimit() - returnedBefore);
        ClosedPageCache.Key closedKey = at.closedKey();
        if (closedKey != null) {
            EventPage kept = closedPages.get(closedKey);
            onCache.accept(kept != null ? "hit" : "miss");
            if (kept != null) {
                return kept;
            }
        }

        List<Event> page = new ArrayList<>();
        boolean more = false;
        long stoppedAbove = Long.MIN_VALUE; // an early return: every event at or above this time was seen
        int bucketsRead = 0;
        RowsPerEvent perEvent = rowsPerEvent.computeIfAbsent(ns.name(), n -> new RowsPerEvent());
        TimeSlicePlanner planner = new TimeSlicePlanner(ns);
        List<Slice> slices = new ArrayList<>(planner.slicesCovering(start, end));
        Collections.reverse(slices);
        outer:
        for (Slice slice : slices) {
            if (!cassandra.hasTable(NamespaceName.keyspace(ns.name()), slice.tableName())) {
                continue;
            }
            int[] buckets = planner.timeBucketsOverlapping(slice, start, end);
            for (int i = buckets.length - 1; i >= 0 && want > 0; i--) {
                long lo = Math.max(start, slice.startMicros() + buckets[i] * slice.bucketMicros());
                long hi = Math.min(end - 1, cursor == null ? Long.MAX_VALUE : cursor.eventTimeMicros());
                if (lo > hi) {
                    continue;
                }
                // past the deadline, return; but read one bucket per call at least, so pages progress
                if (bucketsRead > 0 && System.nanoTime() - began > deadlineMillis * 1_000_000L) {
                    // resume at this bucket's newest microsecond (hi is the cursor's, which may be far above it)
                    long bucketTop = slice.startMicros() + (buckets[i] + 1) * slice.bucketMicros() - 1;
                    stoppedAbove = Math.min(hi, bucketTop) + 1;
                    break outer;
                }
                bucketsRead++;
                int rowsPerFetch = slice.eventBucketsByTime()
                        ? perEvent.fetchSizeInOrder(want - page.size(), !filters.isEmpty())
                        : perEvent.fetchSize(want - page.size(), slice.bucketsPerId(), !filters.isEmpty());
                EventMerge merged = bucket(ns, slice, tsid, buckets[i], lo, hi, rowsPerFetch);
                while (merged.hasNext()) {
                    Event e = merged.next();
                    if (cursor != null
                            && (e.timeMicros() > cursor.eventTimeMicros()
                                    || (e.timeMicros() == cursor.eventTimeMicros()
                                            && e.eventId().compareTo(cursor.eventId()) <= 0))) {
                        continue; // at or before the cursor: served on an earlier page
                    }
                    if (!matches(e, filters)) {
                        continue;
                    }
                    if (page.size() == want || (!page.isEmpty() && bytes >= q.pageSizeBytes())) {
                        more = true;
                        break outer;
                    }
                    page.add(e);
                    bytes += e.eventId().length() + 16L;
                    for (Map.Entry<String, byte[]> it : e.items()) {
                        bytes += it.getKey().length() + it.getValue().length;
                    }
                }
            }
        }
        if (filters.isEmpty()) {
            perEvent.observe(page);
        }
        long returned = returnedBefore + page.size();
        String next = null;
        if (more && returned < q.totalRecordLimit() && !page.isEmpty()) {
            Event last = page.get(page.size() - 1);
            next = tokens.encode(new PageTokens.Cursor(last.timeMicros(), last.eventId(), returned), digest);
        } else if (stoppedAbove != Long.MIN_VALUE && returned < q.totalRecordLimit()) {
            // the deadline passed: resume after the last event served, or below the buckets seen
            Event last = page.isEmpty() ? null : page.get(page.size() - 1);
            next = tokens.encode(
                    last != null
                            ? new PageTokens.Cursor(last.timeMicros(), last.eventId(), returned)
                            // resume at the newest unread microsecond, every id at it included
                            : new PageTokens.Cursor(stoppedAbove - 1, "", returned),
                    digest);
        }
        EventPage result = new EventPage(page, next);
        if (closedKey != null && stoppedAbove == Long.MIN_VALUE) { // a page cut by the deadline is not kept
            // until retention may drop the oldest slice the query covers
            long oldestSliceEnd = slices.isEmpty()
                    ? Long.MAX_VALUE / 2
                    : slices.get(slices.size() - 1).endMicros();
            long deleteAt = oldestSliceEnd + ns.retention().deleteAfter().toNanos() / 1000;
            closedPages.put(closedKey, result, deleteAt / 1000);
        }
        return result;
    }

    /**
     * The events of one time bucket, newest first: its event buckets asked in one query, at most
     * rowsPerFetch rows a partition, merged as read; a partition that had that many is read on by
     * a query of its own ({@link ResumedRows}).
     */
    private EventMerge bucket(
            NamespaceConfig ns, Slice slice, String tsid, int timeBucket, long lo, long hi, int rowsPerFetch) {
        String keyspace = NamespaceName.keyspace(ns.name());
        CqlSession session = cassandra.get();
        PreparedStatement ps = statements.computeIfAbsent(
                keyspace + "." + slice.tableName(),
                t -> cassandra.prepareListed(SliceTable.selectRange(keyspace, slice.tableName())));
        int n = slice.bucketsPerId();
        if (slice.eventBucketsByTime()) {
            return new EventMerge(
                    List.of(newestBucketFirst(session, ps, slice, tsid, timeBucket, lo, hi, rowsPerFetch)));
        }
        if (n == 1) {
            var statement = ps.bind(tsid, timeBucket, 0, lo, hi).setPageSize(rowsPerFetch);
            return new EventMerge(List.of(new ItemRows(queries, queries.issue(() -> session.executeAsync(statement)))));
        }
        List<Iterator<ItemRows.ItemRow>> partitions = new ArrayList<>();
        PreparedStatement all = statements.computeIfAbsent(
                keyspace + "." + slice.tableName() + " by buckets",
                t -> cassandra.prepareListed(SliceTable.selectRangeOfBuckets(keyspace, slice.tableName())));
        var shared = all.boundStatementBuilder(tsid, timeBucket)
                .set(2, EVENT_BUCKETS.computeIfAbsent(n, TimeSeriesQueries::zeroTo), INT_LIST)
                .setLong(3, lo)
                .setLong(4, hi)
                .setInt(5, rowsPerFetch)
                .setPageSize(n * rowsPerFetch)
                .build();
        CompletableFuture<Map<Integer, List<ItemRows.ItemRow>>> first =
                ItemRows.byEventBucket(queries, queries.issue(() -> session.executeAsync(shared)));
        for (int b = 0; b < n; b++) {
            int eventBucket = b;
            partitions.add(new ResumedRows(
                    () -> ItemRows.await(first).getOrDefault(eventBucket, List.of()), rowsPerFetch, last -> {
                        var rest = ps.bind(tsid, timeBucket, eventBucket, lo, last.timeMicros())
                                .setPageSize(rowsPerFetch);
                        return new ItemRows(queries, queries.issue(() -> session.executeAsync(rest)));
                    }));
        }
        return new EventMerge(partitions);
    }

    /**
     * A time bucket whose event buckets are by time: each holds one range of it, the later ranges
     * the later buckets, so their rows read one bucket after another, newest first, are already
     * in the slice's order. A bucket is asked for only when the reader has taken every row of the
     * ones after it: a page the newest bucket fills costs Cassandra one partition read, where the
     * buckets of an id's hash cost one a bucket (a hand-off to its read stage each).
     */
    private Iterator<ItemRows.ItemRow> newestBucketFirst(
            CqlSession session,
            PreparedStatement ps,
            Slice slice,
            String tsid,
            int timeBucket,
            long lo,
            long hi,
            int rowsPerFetch) {
        List<Supplier<Iterator<ItemRows.ItemRow>>> buckets = new ArrayList<>();
        for (int b = slice.bucketsPerId() - 1; b >= 0; b--) {
            long[] times = slice.eventBucketTimes(timeBucket, b);
            long from = Math.max(lo, times[0]);
            long to = Math.min(hi, times[1] - 1);
            if (from > to) {
                continue;
            }
            int eventBucket = b;
            buckets.add(() -> {
                var statement = ps.bind(tsid, timeBucket, eventBucket, from, to).setPageSize(rowsPerFetch);
                return new ItemRows(queries, queries.issue(() -> session.executeAsync(statement)));
            });
        }
        return new ConcatenatedRows(buckets);
    }

    private static List<Integer> zeroTo(int n) {
        List<Integer> out = new ArrayList<>(n);
        for (int b = 0; b < n; b++) {
            out.add(b);
        }
        return List.copyOf(out);
    }

    /** Iterators taken one after another, each made only when the one before it is used up. */
    static final class ConcatenatedRows implements Iterator<ItemRows.ItemRow> {
        private final Iterator<Supplier<Iterator<ItemRows.ItemRow>>> next;
        private Iterator<ItemRows.ItemRow> current = Collections.emptyIterator();

        ConcatenatedRows(List<Supplier<Iterator<ItemRows.ItemRow>>> parts) {
            this.next = parts.iterator();
        }

        @Override
        public boolean hasNext() {
            while (!current.hasNext()) {
                if (!next.hasNext()) {
                    return false;
                }
                current = next.next().get();
            }
            return true;
        }

        @Override
        public ItemRows.ItemRow next() {
            if (!hasNext()) {
                throw new java.util.NoSuchElementException();
            }
            return current.next();
        }
    }

    /**
     * Every stored event of one id with from <= event_time < to, in no order: the time buckets of
     * every slice read in parallel, each in one query over its event buckets (the ACCURATE counter
     * read and the recount). A query a partition cost Cassandra and the driver a request each
     * (AddAndGetCount: five requests for four event buckets and the rollup row).
     */
    public List<Event> scan(NamespaceConfig ns, String tsid, long from, long to) {
        TimeSlicePlanner planner = new TimeSlicePlanner(ns);
        List<Supplier<List<Event>>> reads = new ArrayList<>();
        for (Slice slice : planner.slicesCovering(from, to)) {
            if (!cassandra.hasTable(NamespaceName.keyspace(ns.name()), slice.tableName())) {
                continue;
            }
            for (int bucket : planner.timeBucketsOverlapping(slice, from, to)) {
                long lo = Math.max(from, slice.startMicros() + bucket * slice.bucketMicros());
                reads.add(() -> {
                    List<Event> events = new ArrayList<>();
                    bucket(ns, slice, tsid, bucket, lo, to - 1, SCAN_ROWS_PER_PARTITION)
                            .forEachRemaining(events::add);
                    return events;
                });
            }
        }
        List<Event> out = new ArrayList<>();
        if (reads.isEmpty()) {
            return out;
        }
        // the other time buckets on the pool, the first on this thread: a scan of one time bucket
        // (a counter read, mostly) then costs no hand-off to a pool thread and back
        List<CompletableFuture<List<Event>>> others = new ArrayList<>();
        for (Supplier<List<Event>> read : reads.subList(1, reads.size())) {
            others.add(CompletableFuture.supplyAsync(read, buckets));
        }
        try {
            out.addAll(reads.get(0).get());
            others.forEach(f -> out.addAll(f.join()));
        } catch (RuntimeException e) {
            Throwable cause = Failures.unwrap(e);
            throw cause instanceof ServiceException a
                    ? a
                    : new ServiceException(
                            ErrorCode.CASSANDRA_UNAVAILABLE, "a bucket read failed: " + cause.getMessage(), null);
        }
        return out;
    }

    private static boolean matches(Event e, List<ItemFilter> filters) {
        for (ItemFilter f : filters) {
            boolean hit = e.items().stream()
                    .anyMatch(it -> it.getKey().equals(f.key()) && Arrays.equals(it.getValue(), f.value()));
            if (!hit) {
                return false;
            }
        }
        return true;
    }

    static long queryDigest(String ns, String tsid, long start, long end, List<ItemFilter> filters) {
        StringBuilder sb = new StringBuilder(ns)
                .append('\u0000')
                .append(tsid)
                .append('\u0000')
                .append(start)
                .append('\u0000')
                .append(end);
        for (ItemFilter f : filters) {
            sb.append('\u0000')
                    .append(f.key())
                    .append('=')
                    .append(Base64.getEncoder().encodeToString(f.value()));
        }
        return Fnv64.of(sb.toString());
    }

    public void close() {
        horizon.close();
        buckets.shutdownNow();
        cassandra.close();
    }
}
