package io.tally.jobs.cassandra;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Rows waiting to be written, grouped by Cassandra partition, handed out as single-partition
 * groups (the writer sends each as one unlogged batch: one mutation, one commit-log entry, where
 * one insert per row cost a mutation each). A group is handed out when the next event would make
 * it pass maxRows or maxBytes, and always whole events: an event's rows (its items) are one
 * partition, so they go in one batch and a reader never sees half an event. The caller hands out
 * what is left when it must (before a checkpoint, or after a short delay).
 *
 * @param <R> a row ready to be written (a bound statement in production)
 */
public final class PartitionBatches<R> {
    /** One partition's rows, in arrival order. */
    public record Batch<R>(String partition, List<R> rows, long bytes) {}

    /** Takes each batch handed out (the writer submits it). */
    @FunctionalInterface
    public interface Sender<R> {
        void send(Batch<R> batch) throws IOException, InterruptedException;
    }

    private static final class Open<R> {
        final List<R> rows = new ArrayList<>();
        long bytes;
        String lastEvent;
    }

    private final int maxRows;
    private final long maxBytes;
    private final Sender<R> send;
    private final Map<String, Open<R>> open = new LinkedHashMap<>();
    private int rows;

    /**
     * @param maxRows rows a batch holds at most (unless one event has more)
     * @param maxBytes bytes of values a batch holds at most (unless one event has more)
     * @param send takes each batch handed out
     */
    public PartitionBatches(int maxRows, long maxBytes, Sender<R> send) {
        this.maxRows = maxRows;
        this.maxBytes = maxBytes;
        this.send = send;
    }

    /**
     * @param partition the row's partition key (keyspace, table and partition columns)
     * @param event the row's event (time and id): rows of one event stay in one batch
     */
    public void add(String partition, String event, R row, long bytes) throws IOException, InterruptedException {
        Open<R> b = open.computeIfAbsent(partition, p -> new Open<>());
        boolean newEvent = !event.equals(b.lastEvent);
        if (newEvent && !b.rows.isEmpty() && (b.rows.size() >= maxRows || b.bytes + bytes > maxBytes)) {
            hand(partition, b);
        }
        b.rows.add(row);
        b.bytes += bytes;
        b.lastEvent = event;
        rows++;
    }

    /** Rows waiting. */
    public int waiting() {
        return rows;
    }

    /** Hands out every waiting group. */
    public void flush() throws IOException, InterruptedException {
        for (Map.Entry<String, Open<R>> e : new ArrayList<>(open.entrySet())) {
            hand(e.getKey(), e.getValue());
        }
        open.clear();
    }

    private void hand(String partition, Open<R> b) throws IOException, InterruptedException {
        if (b.rows.isEmpty()) {
            return;
        }
        Batch<R> out = new Batch<>(partition, List.copyOf(b.rows), b.bytes);
        rows -= b.rows.size();
        b.rows.clear();
        b.bytes = 0;
        send.send(out);
    }
}
