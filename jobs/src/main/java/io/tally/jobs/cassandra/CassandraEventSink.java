package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.tally.model.KeyParts;
import io.tally.model.cassandra.KeyspaceReplication;
import io.tally.model.cassandra.SliceTable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

/**
 * Writes EventRows to their slice tables with the Cassandra driver: asynchronous, bounded in
 * flight, and flushed before every checkpoint completes. With Kafka offsets in the checkpoint
 * and every write an idempotent upsert, a restart replays at most the records after the last
 * checkpoint and rewrites identical rows: the stored effect is exactly once.
 *
 * <p>Rows of one partition that arrive within the batching's linger ({@link WriteBatching}) of each other go as one
 * unlogged single-partition batch ({@link PartitionBatches}; whole events, bounded in rows and
 * bytes): one mutation instead of one per row (for TimeSeries one insert per item before). Small
 * partition groups of the same window then share a batch with others on the same replicas
 * ({@link ReplicaBatches}): one request instead of one per partition.
 */
public class CassandraEventSink implements Sink<EventRow> {
    private final CassandraEndpoint cassandra;
    private final int maxInFlight;

    public CassandraEventSink(CassandraEndpoint cassandra, int maxInFlight) {
        this.cassandra = cassandra;
        this.maxInFlight = maxInFlight;
    }

    /** A batch's bounds (single-partition batches are exempt from Cassandra's batch size limits, CASSANDRA-10876). */
    static final int BATCH_ROWS = 100;

    static final long BATCH_BYTES = 256 * 1024;
    /** Rows held at most before all are sent, however young. */
    static final int MAX_WAITING_ROWS = 5_000;

    @Override
    @SuppressWarnings("deprecation")
    public SinkWriter<EventRow> createWriter(InitContext context) {
        return new Writer(
                new AsyncCqlWrites(cassandra, maxInFlight).measuredBy(context.metricGroup()),
                cassandra.replication(),
                cassandra.batching(),
                context.getProcessingTimeService());
    }

    static final class Writer implements SinkWriter<EventRow> {
        private final AsyncCqlWrites writes;
        private final SliceTables tables;
        private final Map<String, PreparedStatement> inserts = new ConcurrentHashMap<>();
        private final PartitionBatches<BoundStatement> batches;
        private final ReplicaBatches<BoundStatement> replicaBatches;
        private final ProcessingTimeService time;
        private final long lingerMs;
        private boolean lingering;

        Writer(
                AsyncCqlWrites writes,
                KeyspaceReplication replication,
                WriteBatching batching,
                ProcessingTimeService time) {
            this.writes = writes;
            this.tables = new SliceTables(writes.session(), replication);
            this.time = time;
            this.lingerMs = batching.lingerMs();
            this.replicaBatches = batching.replicaBatches((rows, partitions) -> writes.submitAll(rows));
            this.batches = new PartitionBatches<>(
                    BATCH_ROWS,
                    BATCH_BYTES,
                    batch -> replicaBatches.add(writes.replicasOf(batch.rows().get(0)), batch.rows(), batch.bytes()));
        }

        /** Sends what waited the linger (runs in the task's mailbox thread, as write does). */
        private void lingered(long now) throws IOException, InterruptedException {
            lingering = false;
            batches.flush();
            replicaBatches.flush();
        }

        @Override
        public void write(EventRow row, Context context) throws IOException, InterruptedException {
            if (!writes.goneKeyspaces().isEmpty()) { // a namespace was deleted: its cached tables are stale
                for (String gone : writes.goneKeyspaces()) {
                    tables.forgetKeyspace(gone);
                    inserts.keySet().removeIf(t -> t.startsWith(gone + "."));
                }
                writes.goneKeyspaces().clear();
            }
            String qualified = row.keyspace + "." + row.table;
            PreparedStatement insert = inserts.get(qualified);
            if (insert == null || !tables.known(qualified)) {
                insert = writes.schemaStep(row.keyspace, row.table, () -> {
                    tables.ensure(row);
                    return inserts.computeIfAbsent(
                            qualified, t -> writes.session().prepare(SliceTable.insert(row.keyspace, row.table)));
                });
                if (insert == null) {
                    return; // its namespace was deleted between its DDL and this row
                }
            }
            BoundStatement bound = insert.bind(
                    row.timeSeriesId,
                    row.timeBucket,
                    row.eventBucket,
                    row.eventTimeMicros,
                    row.eventId,
                    row.itemKey,
                    ByteBuffer.wrap(row.itemValue));
            batches.add(
                    KeyParts.join(row.keyspace, row.table, row.timeSeriesId, row.timeBucket, row.eventBucket),
                    row.eventTimeMicros + "/" + row.eventId,
                    bound,
                    row.itemValue.length + row.itemKey.length() + row.eventId.length() + 16L);
            if (batches.waiting() >= MAX_WAITING_ROWS) {
                batches.flush();
            } else if (!lingering) {
                lingering = true;
                time.registerTimer(time.getCurrentProcessingTime() + lingerMs, this::lingered);
            }
        }

        @Override
        public void flush(boolean endOfInput) throws IOException, InterruptedException {
            batches.flush();
            replicaBatches.flush();
            writes.flush();
        }

        @Override
        public void close() {
            writes.close();
        }
    }
}
