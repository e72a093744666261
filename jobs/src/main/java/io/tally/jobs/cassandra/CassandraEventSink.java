package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import io.tally.model.cassandra.SliceTable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

/**
 * Writes EventRows to their slice tables with the Cassandra driver: asynchronous, bounded in
 * flight, and flushed before every checkpoint completes. With Kafka offsets in the checkpoint
 * and every write an idempotent upsert, a restart replays at most the records after the last
 * checkpoint and rewrites identical rows: the stored effect is exactly once.
 */
public class CassandraEventSink implements Sink<EventRow> {
    private final String host;
    private final int port;
    private final int maxInFlight;

    public CassandraEventSink(String host, int port, int maxInFlight) {
        this.host = host;
        this.port = port;
        this.maxInFlight = maxInFlight;
    }

    @Override
    @SuppressWarnings("deprecation")
    public SinkWriter<EventRow> createWriter(InitContext context) {
        return new Writer(new AsyncCqlWrites(host, port, maxInFlight));
    }

    static final class Writer implements SinkWriter<EventRow> {
        private final AsyncCqlWrites writes;
        private final SliceTables tables;
        private final Map<String, PreparedStatement> inserts = new ConcurrentHashMap<>();

        Writer(AsyncCqlWrites writes) {
            this.writes = writes;
            this.tables = new SliceTables(writes.session());
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
            PreparedStatement insert;
            try {
                tables.ensure(row);
                insert = inserts.computeIfAbsent(row.keyspace + "." + row.table, t -> writes.session()
                        .prepare(SliceTable.insert(row.keyspace, row.table)));
            } catch (InvalidQueryException e) {
                if (AsyncCqlWrites.goneKeyspace(e) == null) {
                    throw e;
                }
                writes.dropped(row.keyspace, e); // dropped between its DDL and this row
                return;
            }
            writes.submit(insert.bind(
                    row.timeSeriesId,
                    row.timeBucket,
                    row.eventBucket,
                    row.eventTimeMicros,
                    row.eventId,
                    row.itemKey,
                    ByteBuffer.wrap(row.itemValue)));
        }

        @Override
        public void flush(boolean endOfInput) throws IOException, InterruptedException {
            writes.flush();
        }

        @Override
        public void close() {
            writes.close();
        }
    }
}
