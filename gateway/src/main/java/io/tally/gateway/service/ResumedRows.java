package io.tally.gateway.service;

import io.tally.gateway.service.ItemRows.ItemRow;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One partition's rows in clustering order (event_time DESC, event_id ASC, item key ASC) when its
 * first rows came from one query over all the event buckets of a time bucket, at most {@code
 * limit} a partition (PER PARTITION LIMIT): one request where a request per partition cost
 * Cassandra a hand-off each. A reader that goes past them, in a partition that had {@code limit}
 * rows there, gets the rest from a query of that partition from the last row's time down, whose
 * rows at that time up to the last one given are skipped.
 */
final class ResumedRows implements Iterator<ItemRow> {
    private final Supplier<List<ItemRow>> first;
    private final int limit;
    private final Function<ItemRow, Iterator<ItemRow>> rest;
    private Iterator<ItemRow> given;
    private boolean givenFull;
    private ItemRow last;
    private Iterator<ItemRow> more;
    private ItemRow skipThrough;
    private ItemRow ahead;

    /**
     * @param first the partition's rows of the shared query (waits for it)
     * @param limit the shared query's rows a partition at most
     * @param rest the partition's rows with event_time at most the given row's, in clustering order
     */
    ResumedRows(Supplier<List<ItemRow>> first, int limit, Function<ItemRow, Iterator<ItemRow>> rest) {
        this.first = first;
        this.limit = limit;
        this.rest = rest;
    }

    @Override
    public boolean hasNext() {
        if (ahead != null) {
            return true;
        }
        if (more == null) {
            if (given == null) {
                List<ItemRow> rows = first.get();
                given = rows.iterator();
                givenFull = rows.size() >= limit;
            }
            if (given.hasNext()) {
                ahead = given.next();
                last = ahead;
                return true;
            }
            if (!givenFull || last == null) {
                return false;
            }
            more = rest.apply(last);
            skipThrough = last;
        }
        while (more.hasNext()) {
            ItemRow r = more.next();
            if (skipThrough != null) {
                if (!after(r, skipThrough)) {
                    continue; // given already
                }
                skipThrough = null; // rows come in clustering order: every one from here is new
            }
            ahead = r;
            return true;
        }
        return false;
    }

    @Override
    public ItemRow next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        ItemRow r = ahead;
        ahead = null;
        return r;
    }

    /** Whether a comes after b in the slice tables' clustering order. */
    static boolean after(ItemRow a, ItemRow b) {
        if (a.timeMicros() != b.timeMicros()) {
            return a.timeMicros() < b.timeMicros();
        }
        int byId = a.eventId().compareTo(b.eventId());
        return byId != 0 ? byId > 0 : a.itemKey().compareTo(b.itemKey()) > 0;
    }
}
