package io.tally.gateway.service;

import java.util.List;

/**
 * How many rows an event of one namespace takes in its slice tables (one an item, one for an event
 * without items), as seen in the pages read lately. A page's first query asks each event bucket for
 * about its share of the page in rows: too few costs a second query for that partition, too many
 * costs Cassandra and the driver rows nobody reads. A hint, not a bound: updates may race.
 */
final class RowsPerEvent {
    /** Weight of one page in the estimate: a few pages move it, one odd page does not. */
    private static final double WEIGHT = 0.125;

    private volatile double estimate = 1.0;

    double estimate() {
        return estimate;
    }

    /**
     * Rows to ask each of `eventBuckets` partitions for, for `events` events of a page: from this
     * estimate, or, for a read that filters by item (how many events match is unknown), {@link
     * #filteredRowsPerFetch}.
     */
    int fetchSize(int events, int eventBuckets, boolean filtered) {
        return filtered ? filteredRowsPerFetch(events, eventBuckets) : rowsPerFetch(events, eventBuckets, estimate);
    }

    /**
     * Rows to ask one partition for when partitions are read one after another, newest first
     * (event buckets by time): the page's events and one more (to know whether there are more),
     * with a margin for events of more items than the estimate, not a share of several partitions.
     */
    int fetchSizeInOrder(int events, boolean filtered) {
        return filtered ? filteredRowsPerFetch(events, 1) : rowsInOrder(events, estimate);
    }

    static int rowsInOrder(int events, double rowsPerEvent) {
        double rows = (Math.max(1, events) + 1) * Math.max(1.0, rowsPerEvent);
        return (int) Math.min(5_000, Math.ceil(rows * 1.05) + 4);
    }

    /** The events of a page served without a filter: the rows they took, into the estimate. */
    void observe(List<TimeSeriesQueries.Event> page) {
        long rows = 0;
        for (TimeSeriesQueries.Event e : page) {
            rows += Math.max(1, e.items().size());
        }
        observe(page.size(), rows);
    }

    /** A page of `events` events that held `rows` rows. */
    void observe(int events, long rows) {
        if (events > 0) {
            estimate = estimate * (1 - WEIGHT) + WEIGHT * Math.max(1.0, (double) rows / events);
        }
    }

    /**
     * Rows to ask each of `eventBuckets` partitions for, for `events` events (and one more, to know
     * whether there are more): the expected share with 5% and one event to spare for events of
     * more items than the estimate, plus 1.5 standard deviations of the share (events fall into
     * buckets by hash: a binomial count, no spread with one bucket) and a few; at most 5,000. A
     * bucket that held more of the page's events costs one more query, on about one page in
     * twenty with four buckets: every row fetched costs Cassandra a memtable read and a copy (its
     * local read serializes the rows it returns), and three deviations plus 8 fetched 352 rows for
     * the 200 of a page of 100 two-item events where this fetches 280.
     */
    static int rowsPerFetch(int events, int eventBuckets, double rowsPerEvent) {
        double perEvent = Math.max(1.0, rowsPerEvent);
        double n = Math.max(1, events) + 1.0;
        double p = 1.0 / Math.max(1, eventBuckets);
        double share = n * p * perEvent;
        double spread = perEvent * Math.sqrt(n * p * (1 - p));
        return (int) Math.min(5_000, Math.ceil(share * 1.05 + 1.5 * spread + perEvent) + 2);
    }

    /** A filtered read's rows a partition query: about twice a page's share of each event bucket, at least a few dozen. */
    static int filteredRowsPerFetch(int events, int eventBuckets) {
        return (int) Math.min(5_000, Math.max(64, 2L * (events + 1) / Math.max(1, eventBuckets) + 32));
    }
}
