package io.tally.jobs.timeseries;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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
        return new Writer(CqlSession.builder().addContactPoint(new InetSocketAddress(host, port))
                .withLocalDatacenter("datacenter1").build(), maxInFlight);
    }

    static final class Writer implements SinkWriter<EventRow> {
        private final CqlSession session;
        private final SliceTables tables;
        private final Semaphore inFlight;
        private final int maxInFlight;
        private final Map<String, PreparedStatement> inserts = new ConcurrentHashMap<>();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        Writer(CqlSession session, int maxInFlight) {
            this.session = session;
            this.tables = new SliceTables(session);
            this.maxInFlight = maxInFlight;
            this.inFlight = new Semaphore(maxInFlight);
        }

        @Override
        public void write(EventRow row, Context context) throws IOException, InterruptedException {
            rethrow();
            tables.ensure(row);
            PreparedStatement insert = inserts.computeIfAbsent(row.keyspace + "." + row.table, t -> session.prepare(
                    "INSERT INTO " + t + " (time_series_id, time_bucket, event_bucket, event_time, event_id, "
                            + "event_item_key, event_item_value) VALUES (?, ?, ?, ?, ?, ?, ?)"));
            inFlight.acquire();
            session.executeAsync(insert.bind(row.timeSeriesId, row.timeBucket, row.eventBucket, row.eventTimeMicros,
                    row.eventId, row.itemKey, ByteBuffer.wrap(row.itemValue))).whenComplete((rs, err) -> {
                        if (err != null) {
                            failure.compareAndSet(null, err);
                        }
                        inFlight.release();
                    });
        }

        /** Waits for every write in flight: called before a checkpoint and at the end of input. */
        @Override
        public void flush(boolean endOfInput) throws IOException, InterruptedException {
            if (!inFlight.tryAcquire(maxInFlight, 120, TimeUnit.SECONDS)) {
                throw new IOException("Cassandra writes did not complete within 120 s");
            }
            inFlight.release(maxInFlight);
            rethrow();
        }

        private void rethrow() throws IOException {
            Throwable t = failure.get();
            if (t != null) {
                throw new IOException("a Cassandra write failed (the job restarts from its last checkpoint): " + t, t);
            }
        }

        @Override
        public void close() throws Exception {
            session.close();
        }
    }
}
