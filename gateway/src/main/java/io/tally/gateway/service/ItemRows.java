package io.tally.gateway.service;

import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import io.tally.model.Bytes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * One slice partition's rows in clustering order (newest event first), fetched a driver page at a
 * time and only when the reader gets to the end of the page it has: a read that fills its page
 * from the first rows never makes Cassandra read the rest of the partition.
 */
final class ItemRows implements Iterator<ItemRows.ItemRow> {
    /** One stored row: an item of an event (key "" for an event stored without items). */
    record ItemRow(long timeMicros, String eventId, String itemKey, byte[] value) {}

    /** The longest a reader waits for one page; the driver's own request timeout is shorter. */
    private static final long PAGE_WAIT_MILLIS = 10_000;

    private final Permits permits;
    private CompletionStage<AsyncResultSet> pending;
    private AsyncResultSet page;
    private Iterator<Row> rows;

    /**
     * Queries in flight across the gateway: a read that would pass the bound is refused
     * (READ_BACKPRESSURE) instead of queueing behind the others without end.
     */
    static final class Permits {
        private final Semaphore free;

        Permits(int queries) {
            this.free = new Semaphore(queries);
        }

        CompletionStage<AsyncResultSet> issue(Supplier<CompletionStage<AsyncResultSet>> query) {
            if (!free.tryAcquire()) {
                throw new ServiceException(
                        ErrorCode.READ_BACKPRESSURE, "the gateway has too many reads in flight; retry shortly", null);
            }
            try {
                return query.get().whenComplete((rs, err) -> free.release());
            } catch (RuntimeException e) {
                free.release();
                throw e;
            }
        }
    }

    /** @param first the partition's first page, already asked for (so partitions are read in parallel) */
    ItemRows(Permits permits, CompletionStage<AsyncResultSet> first) {
        this.permits = permits;
        this.pending = first;
    }

    @Override
    public boolean hasNext() {
        while (rows == null || !rows.hasNext()) {
            if (pending == null) {
                if (page == null || !page.hasMorePages()) {
                    return false;
                }
                AsyncResultSet current = page;
                pending = permits.issue(current::fetchNextPage);
            }
            page = await(pending);
            pending = null;
            rows = page.currentPage().iterator();
        }
        return true;
    }

    @Override
    public ItemRow next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        return decode(rows.next(), 0);
    }

    /**
     * A row's item columns from column `first` on (event_time bigint, event_id text,
     * event_item_key text, event_item_value blob), decoded by their codecs named: the driver's
     * getters look a codec up in its registry for every cell (a scan of its primitive codecs), 2-4%
     * of the gateway's CPU for a page by id (./tally profile gateway read_first_page).
     */
    private static ItemRow decode(Row r, int first) {
        ProtocolVersion v = r.protocolVersion();
        return new ItemRow(
                TypeCodecs.BIGINT.decodePrimitive(r.getBytesUnsafe(first), v),
                TypeCodecs.TEXT.decode(r.getBytesUnsafe(first + 1), v),
                TypeCodecs.TEXT.decode(r.getBytesUnsafe(first + 2), v),
                Bytes.of(r.getBytesUnsafe(first + 3)));
    }

    /**
     * The rows of a query over several partitions of one time bucket (columns: event_bucket, then
     * those of a partition read), by event bucket, each in clustering order; every page of it read.
     */
    static CompletableFuture<Map<Integer, List<ItemRow>>> byEventBucket(
            Permits permits, CompletionStage<AsyncResultSet> first) {
        Map<Integer, List<ItemRow>> out = new HashMap<>();
        return collect(permits, first, out).toCompletableFuture();
    }

    private static CompletionStage<Map<Integer, List<ItemRow>>> collect(
            Permits permits, CompletionStage<AsyncResultSet> stage, Map<Integer, List<ItemRow>> out) {
        return stage.thenCompose(rs -> {
            for (Row r : rs.currentPage()) {
                int eventBucket = TypeCodecs.INT.decodePrimitive(r.getBytesUnsafe(0), r.protocolVersion());
                out.computeIfAbsent(eventBucket, b -> new ArrayList<>()).add(decode(r, 1));
            }
            return rs.hasMorePages()
                    ? collect(permits, permits.issue(rs::fetchNextPage), out)
                    : CompletableFuture.completedFuture(out);
        });
    }

    static <T> T await(CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get(PAGE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable("interrupted");
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw cause instanceof ServiceException s ? s : unavailable(cause.getMessage());
        } catch (TimeoutException e) {
            throw unavailable("no answer in " + PAGE_WAIT_MILLIS + " ms");
        }
    }

    private static ServiceException unavailable(String why) {
        return new ServiceException(ErrorCode.CASSANDRA_UNAVAILABLE, "a partition read failed: " + why, null);
    }
}
