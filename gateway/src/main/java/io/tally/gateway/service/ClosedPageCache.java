package io.tally.gateway.service;

import io.tally.gateway.service.TimeSeriesQueries.Event;
import io.tally.gateway.service.TimeSeriesQueries.EventPage;
import io.tally.namespace.NamespaceConfig;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * ReadEventRecords pages whose every event lies behind the {@link StoredHorizon}: such a page can
 * never change (nothing is added behind the horizon, and the rows there only go when retention
 * drops their slice), so it is kept and served again without Cassandra. Least recently used pages
 * go first once the cache holds its byte budget; a page expires when the first slice it covers is
 * due for deletion, and after a time to live at most. The key holds the namespace's whole config,
 * so a config change (a wider accept_limit reopens the past) starts from nothing.
 */
public final class ClosedPageCache {
    /** What makes one page: the query, its position and the namespace's config. */
    record Key(
            NamespaceConfig namespace,
            String timeSeriesId,
            long queryDigest,
            String pageToken,
            int pageSize,
            long totalRecordLimit,
            long pageSizeBytes) {}

    private record Entry(EventPage page, long bytes, long expiresAtMillis) {}

    private final long budgetBytes;
    private final long ttlMillis;
    private final LongSupplier clockMillis;
    private final LinkedHashMap<Key, Entry> pages = new LinkedHashMap<>(256, 0.75f, true);
    private long bytes;

    /** @param budgetBytes what the pages may hold together (0: no cache) */
    public ClosedPageCache(long budgetBytes, long ttlMillis, LongSupplier clockMillis) {
        this.budgetBytes = budgetBytes;
        this.ttlMillis = ttlMillis;
        this.clockMillis = clockMillis;
    }

    public boolean enabled() {
        return budgetBytes > 0;
    }

    /** The page kept for this key, or null. */
    public synchronized EventPage get(Key key) {
        Entry e = pages.get(key);
        if (e == null) {
            return null;
        }
        if (clockMillis.getAsLong() >= e.expiresAtMillis()) {
            remove(key);
            return null;
        }
        return e.page();
    }

    /**
     * Keeps a page until deleteAtMillis (when retention may drop the oldest slice it covers) or
     * the time to live, whichever comes first; a page larger than the whole budget is not kept.
     */
    public synchronized void put(Key key, EventPage page, long deleteAtMillis) {
        long size = sizeOf(key, page);
        long expires = Math.min(deleteAtMillis, clockMillis.getAsLong() + ttlMillis);
        if (size > budgetBytes || expires <= clockMillis.getAsLong()) {
            return;
        }
        remove(key);
        pages.put(key, new Entry(page, size, expires));
        bytes += size;
        Iterator<Map.Entry<Key, Entry>> eldest = pages.entrySet().iterator();
        while (bytes > budgetBytes && eldest.hasNext()) {
            bytes -= eldest.next().getValue().bytes();
            eldest.remove();
        }
    }

    public synchronized long bytes() {
        return bytes;
    }

    public synchronized int size() {
        return pages.size();
    }

    private void remove(Key key) {
        Entry old = pages.remove(key);
        if (old != null) {
            bytes -= old.bytes();
        }
    }

    /** About what a page holds on the heap: its strings, item values and the objects around them. */
    static long sizeOf(Key key, EventPage page) {
        long size = 200
                + 2L * key.timeSeriesId().length()
                + (key.pageToken() == null ? 0 : 2L * key.pageToken().length());
        for (Event e : page.events()) {
            size += 64 + 2L * e.eventId().length();
            for (Map.Entry<String, byte[]> it : e.items()) {
                size += 64 + 2L * it.getKey().length() + it.getValue().length;
            }
        }
        return size;
    }
}
