package io.tally.jobs.counter;

import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.tally.jobs.cassandra.AsyncCqlWrites;
import io.tally.jobs.cassandra.CassandraEndpoint;
import io.tally.jobs.cassandra.CounterTables;
import io.tally.jobs.cassandra.ReplicaBatches;
import io.tally.jobs.cassandra.WriteBatching;
import io.tally.model.Micros;
import io.tally.model.cassandra.CounterRollupsTable;
import io.tally.model.cassandra.KeyspaceReplication;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

/**
 * Writes rollups into each namespace's counter_rollups table (created on first use), with the
 * counter's newest accepted event time in the same write. Rollups carry USING TIMESTAMP of their
 * rollup time, so however writes race or replay after a restart, the newest rollup wins and no
 * write can move a counter backwards in time. Flushed before every checkpoint, like the event sink.
 * Rollups of one linger window ({@link WriteBatching}) go in unlogged batches of counters on the same replicas
 * ({@link ReplicaBatches}): each counter is its own partition, so a rollup was a request each.
 */
public class CassandraRollupSink implements Sink<RollupWrite> {
    private final CassandraEndpoint cassandra;

    public CassandraRollupSink(CassandraEndpoint cassandra) {
        this.cassandra = cassandra;
    }

    @Override
    @SuppressWarnings("deprecation")
    public SinkWriter<RollupWrite> createWriter(InitContext context) {
        return new Writer(
                new AsyncCqlWrites(cassandra, 128).measuredBy(context.metricGroup()),
                cassandra.replication(),
                cassandra.batching(),
                context.getProcessingTimeService());
    }

    static final class Writer implements SinkWriter<RollupWrite> {
        private final AsyncCqlWrites writes;
        private final KeyspaceReplication replication;
        private final Map<String, Statements> statements = new ConcurrentHashMap<>();
        private final ReplicaBatches<BoundStatement> batches;
        private final ProcessingTimeService time;
        private boolean lingering;

        private record Statements(PreparedStatement rollup, PreparedStatement rollupWithTtl) {}

        private final long lingerMs;

        Writer(
                AsyncCqlWrites writes,
                KeyspaceReplication replication,
                WriteBatching batching,
                ProcessingTimeService time) {
            this.writes = writes;
            this.replication = replication;
            this.time = time;
            this.lingerMs = batching.lingerMs();
            this.batches = batching.replicaBatches((rows, partitions) -> writes.submitAll(rows));
        }

        /** Sends what waited the linger (in the task's mailbox thread, as write runs). */
        private void lingered(long now) throws IOException, InterruptedException {
            lingering = false;
            batches.flush();
        }

        /** A namespace's prepared statements, creating its table first. */
        private Statements statements(String namespace) {
            return statements.computeIfAbsent(namespace, n -> {
                String ks = CounterTables.create(
                        writes.session(), replication, n); // the provisioner made it already, unless it is new
                var session = writes.session();
                return new Statements(
                        session.prepare(CounterRollupsTable.insertRollupAndLastWrite(ks)),
                        session.prepare(CounterRollupsTable.insertRollupWithTtl(ks)));
            });
        }

        @Override
        public void write(RollupWrite w, Context context) throws IOException, InterruptedException {
            if (!writes.goneKeyspaces().isEmpty()) { // a namespace was deleted: its statements are stale
                statements.clear();
                writes.goneKeyspaces().clear();
            }
            Statements ps;
            try {
                ps = statements(w.namespace);
            } catch (com.datastax.oss.driver.api.core.servererrors.InvalidQueryException e) {
                if (AsyncCqlWrites.goneKeyspace(e) == null
                        || writes.keyspaceHas(
                                com.datastax.oss.driver.api.core.CqlIdentifier.fromInternal(
                                        io.tally.namespace.NamespaceName.keyspace(w.namespace)),
                                null)) {
                    throw e; // a node behind on the schema: retry, the keyspace is there
                }
                writes.dropped(w.namespace, e);
                return;
            }
            Instant at = Micros.toInstant(w.timeMicros);
            BoundStatement row;
            if (w.ttlSeconds > 0) {
                row = ps.rollupWithTtl().bind(w.counter, w.count, at, w.timeMicros, w.ttlSeconds);
            } else {
                var bound = ps.rollup()
                        .bind(w.counter, w.count, at, Micros.toInstant(w.lastWriteMicros), w.writeTimestampMicros());
                // no newest event known (a rollup restored from an old layout): leave the column as it is
                row = w.lastWriteMicros > 0 ? bound : bound.unset(3);
            }
            batches.add(writes.replicasOf(row), List.of(row), w.counter.length() + 40L);
            if (!lingering) {
                lingering = true;
                time.registerTimer(time.getCurrentProcessingTime() + lingerMs, this::lingered);
            }
        }

        @Override
        public void flush(boolean endOfInput) throws IOException, InterruptedException {
            batches.flush();
            writes.flush();
        }

        @Override
        public void close() {
            writes.close();
        }
    }
}
