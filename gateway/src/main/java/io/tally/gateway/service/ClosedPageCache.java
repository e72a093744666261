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

    private record Entry(EventPage page, long bytes, long expiresAtMillis, byte[] answer) {}

    /**
     * A kept page, with the answer a caller made of it when one was remembered ({@link #remember}):
     * the page as sent, so a hit need not be encoded again.
     */
    public final class Kept {
        private final Key key;
        private final EventPage page;
        private final byte[] answer;

        private Kept(Key key, EventPage page, byte[] answer) {
            this.key = key;
            this.page = page;
            this.answer = answer;
        }

        public EventPage page() {
            return page;
        }

        /** The answer remembered with the page, or null. */
        public byte[] answer() {
            return answer;
        }

        /** Keeps the answer made of this page beside it, counted in the budget, while the page is kept. */
        public void remember(byte[] made) {
            ClosedPageCache.this.remember(key, page, made);
        }
    }

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
    public EventPage get(Key key) {
        Kept kept = kept(key);
        return kept == null ? null : kept.page();
    }

    /** The page kept for this key with the answer remembered beside it, or null. */
    public synchronized Kept kept(Key key) {
        Entry e = pages.get(key);
        if (e == null) {
            return null;
        }
        if (clockMillis.getAsLong() >= e.expiresAtMillis()) {
            remove(key);
            return null;
        }
        return new Kept(key, e.page(), e.answer());
    }

    private synchronized void remember(Key key, EventPage page, byte[] answer) {
        Entry e = pages.get(key);
        if (e == null
                || e.page() != page
                || e.answer() != null
                || e.bytes() + answer.length > budgetBytes
                || clockMillis.getAsLong() >= e.expiresAtMillis()) {
            return; // gone, replaced, answered already, too large with it, or expired
        }
        pages.put(key, new Entry(page, e.bytes() + answer.length, e.expiresAtMillis(), answer));
        bytes += answer.length;
        evictOverBudget();
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
        pages.put(key, new Entry(page, size, expires, null));
        bytes += size;
        evictOverBudget();
    }

    /** Drops the least recently used pages until the cache holds its budget. */
    private void evictOverBudget() {
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
