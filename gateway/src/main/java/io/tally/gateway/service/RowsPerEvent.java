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
     * Rows to ask each of `eventBuckets` partitions for, for `events` events: the expected share
     * plus three standard deviations (events fall into buckets by hash, a binomial share) and a few,
     * so about one partition in a few hundred needs a second query; at most 5,000.
     */
    static int rowsPerFetch(int events, int eventBuckets, double rowsPerEvent) {
        double perEvent = Math.max(1.0, rowsPerEvent);
        double share = Math.max(1, events) * perEvent / Math.max(1, eventBuckets);
        return (int) Math.min(5_000, Math.ceil(share + 3 * Math.sqrt(share * perEvent) + 8));
    }

    /** A filtered read's rows a partition query: about twice a page's share of each event bucket, at least a few dozen. */
    static int filteredRowsPerFetch(int events, int eventBuckets) {
        return (int) Math.min(5_000, Math.max(64, 2L * (events + 1) / Math.max(1, eventBuckets) + 32));
    }
}
