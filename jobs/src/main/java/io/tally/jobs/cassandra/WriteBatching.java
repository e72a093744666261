package io.tally.jobs.cassandra;

import java.io.Serializable;

/**
 * How the jobs' Cassandra sinks batch their writes: an unlogged batch of one replica set spans at
 * most {@code partitions} partitions and {@code bytes} bytes, and a row waits at most
 * {@code lingerMs} for others. Each request costs a node far more than a row in it (a native
 * transport task and a mutation task, with the shared executor's park and wake around each), so
 * the bounds set the request rate. The defaults are a stock cluster's warning thresholds
 * (unlogged_batch_across_partitions_warn_threshold 10, batch_size_warn_threshold 5 KiB), so it
 * logs nothing; a cluster whose thresholds are raised takes larger bounds.
 */
public record WriteBatching(int partitions, long bytes, long lingerMs) implements Serializable {
    /** A stock cluster's thresholds, and the 5 ms the sinks waited before the bounds were settings. */
    public static final WriteBatching STOCK = new WriteBatching(10, 5 * 1024, 5);

    public WriteBatching {
        if (partitions < 1 || bytes < 1 || lingerMs < 0) {
            throw new IllegalArgumentException("batch bounds must be positive: partitions " + partitions + ", bytes "
                    + bytes + ", linger " + lingerMs + " ms");
        }
    }

    /** Batches of several partitions on one replica set, within these bounds. */
    public <R> ReplicaBatches<R> replicaBatches(ReplicaBatches.Sender<R> send) {
        return new ReplicaBatches<>(partitions, bytes, send);
    }
}
