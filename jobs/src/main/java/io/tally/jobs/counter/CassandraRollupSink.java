package io.tally.jobs.counter;

import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.tally.jobs.cassandra.AsyncCqlWrites;
import io.tally.jobs.cassandra.SliceTables;
import io.tally.namespace.NamespaceName;
import java.io.IOException;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

/**
 * Writes rollups into each namespace's counter_rollups table (created on first use). Rollups
 * carry USING TIMESTAMP of their rollup time and last_write_ts that of its event, so however
 * writes race or replay after a restart, the newest rollup wins and no write can move a
 * counter backwards in time. Flushed before every checkpoint, like the event sink.
 */
public class CassandraRollupSink implements Sink<RollupWrite> {
    /** A counter namespace's keyspace and counter_rollups table (the sink and the provisioner); returns the keyspace. */
    public static String createTable(com.datastax.oss.driver.api.core.CqlSession session, String namespace) {
        String ks = SliceTables.identifier(NamespaceName.keyspace(namespace));
        session.execute("CREATE KEYSPACE IF NOT EXISTS " + ks
                + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        session.execute("CREATE TABLE IF NOT EXISTS " + ks + "." + TABLE + " (counter text PRIMARY KEY, "
                + "last_rollup_count bigint, last_rollup_ts timestamp, last_write_ts timestamp)");
        return ks;
    }

    public static final String TABLE = "counter_rollups";
    private final String host;
    private final int port;

    public CassandraRollupSink(String host, int port) {
        this.host = host;
        this.port = port;
    }

    @Override
    @SuppressWarnings("deprecation")
    public SinkWriter<RollupWrite> createWriter(InitContext context) {
        return new Writer(new AsyncCqlWrites(host, port, 128));
    }

    static final class Writer implements SinkWriter<RollupWrite> {
        private final AsyncCqlWrites writes;
        private final Map<String, PreparedStatement[]> statements = new ConcurrentHashMap<>();

        Writer(AsyncCqlWrites writes) {
            this.writes = writes;
        }

        /** [rollup, rollup with TTL, last write] for a keyspace, creating its table first. */
        private PreparedStatement[] statements(String namespace) {
            return statements.computeIfAbsent(namespace, n -> {
                String ks = createTable(writes.session(), n);
                var session = writes.session();
                String table = ks + "." + TABLE;
                return new PreparedStatement[] {
                    session.prepare("INSERT INTO " + table + " (counter, last_rollup_count, last_rollup_ts) VALUES (?, ?, ?) USING TIMESTAMP ?"),
                    session.prepare("INSERT INTO " + table + " (counter, last_rollup_count, last_rollup_ts) VALUES (?, ?, ?) "
                            + "USING TIMESTAMP ? AND TTL ?"),
                    session.prepare("UPDATE " + table + " USING TIMESTAMP ? SET last_write_ts = ? WHERE counter = ?")};
            });
        }

        @Override
        public void write(RollupWrite w, Context context) throws IOException, InterruptedException {
            PreparedStatement[] ps = statements(w.namespace);
            Instant at = Instant.EPOCH.plusNanos(w.timeMicros * 1000);
            if (w.kind == RollupWrite.Kind.LAST_WRITE) {
                writes.submit(ps[2].bind(w.timeMicros, at, w.counter));
            } else if (w.ttlSeconds > 0) {
                writes.submit(ps[1].bind(w.counter, w.count, at, w.timeMicros, w.ttlSeconds));
            } else {
                writes.submit(ps[0].bind(w.counter, w.count, at, w.timeMicros));
            }
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
