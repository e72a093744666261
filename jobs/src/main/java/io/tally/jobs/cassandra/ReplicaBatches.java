package io.tally.jobs.cassandra;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Small single-partition groups of rows gathered into unlogged batches of several partitions that
 * share one replica set, the grouping the Spark Cassandra connector calls replica_set. A counter
 * log partition holds one counter, so at 2,000 increments/s over 10,000 counters a 5 ms window
 * holds about one row per partition: single-partition batches were single inserts, a request and
 * a mutation path each. A batch whose partitions all live on its (token-aware) coordinator costs
 * one request; each partition is still its own atomic mutation, so an event (one partition) is
 * never seen half written. The bounds are the cluster's ({@link WriteBatching}: by default its
 * warning thresholds for such batches, so a stock cluster logs nothing); a group alone over the
 * byte bound goes alone (single-partition batches are exempt, CASSANDRA-10876).
 *
 * @param <R> a row ready to be written (a bound statement in production)
 */
public final class ReplicaBatches<R> {
    /** Takes each batch handed out: its rows, of one or more partitions, and how many partitions. */
    @FunctionalInterface
    public interface Sender<R> {
        void send(List<R> rows, int partitions) throws IOException, InterruptedException;
    }

    private static final class Open<R> {
        final List<R> rows = new ArrayList<>();
        int partitions;
        long bytes;
    }

    private final int maxPartitions;
    private final long maxBytes;
    private final Sender<R> send;
    private final Map<Object, Open<R>> open = new HashMap<>();

    public ReplicaBatches(int maxPartitions, long maxBytes, Sender<R> send) {
        this.maxPartitions = maxPartitions;
        this.maxBytes = maxBytes;
        this.send = send;
    }

    /**
     * @param replicas what identifies the partition's replica set (equal for partitions on the same
     *     nodes); null when unknown: the group then goes alone
     * @param rows rows of one partition
     */
    public void add(Object replicas, List<R> rows, long bytes) throws IOException, InterruptedException {
        if (replicas == null || bytes >= maxBytes || maxPartitions <= 1) {
            send.send(rows, 1);
            return;
        }
        Open<R> b = open.computeIfAbsent(replicas, r -> new Open<>());
        if (b.partitions > 0 && (b.partitions >= maxPartitions || b.bytes + bytes > maxBytes)) {
            hand(b);
        }
        b.rows.addAll(rows);
        b.partitions++;
        b.bytes += bytes;
    }

    /** Hands out every open batch. */
    public void flush() throws IOException, InterruptedException {
        for (Open<R> b : open.values()) {
            hand(b);
        }
        open.clear();
    }

    private void hand(Open<R> b) throws IOException, InterruptedException {
        if (b.rows.isEmpty()) {
            return;
        }
        List<R> rows = List.copyOf(b.rows);
        int partitions = b.partitions;
        b.rows.clear();
        b.partitions = 0;
        b.bytes = 0;
        send.send(rows, partitions);
    }
}
