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
import io.tally.namespace.NamespaceName;
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

        /** A namespace's prepared statements, creating its table first (null: the namespace is gone). */
        private Statements statements(String namespace, long namespaceCreatedMicros) throws InterruptedException {
            Statements known = statements.get(namespace);
            if (known != null) {
                return known;
            }
            String keyspace = NamespaceName.keyspace(namespace);
            Statements made = writes.schemaStep(keyspace, CounterRollupsTable.TABLE, () -> {
                // the provisioner made them already, unless the namespace is new
                CounterTables.create(writes.session(), replication, namespace, namespaceCreatedMicros);
                var session = writes.session();
                return new Statements(
                        session.prepare(CounterRollupsTable.insertRollupAndLastWrite(keyspace)),
                        session.prepare(CounterRollupsTable.insertRollupWithTtl(keyspace)));
            });
            if (made != null) {
                statements.put(namespace, made);
            }
            return made;
        }

        @Override
        public void write(RollupWrite w, Context context) throws IOException, InterruptedException {
            if (!writes.goneKeyspaces().isEmpty()) { // a namespace was deleted: its statements are stale
                statements.clear();
                writes.goneKeyspaces().clear();
            }
            Statements ps = statements(w.namespace, w.namespaceCreatedMicros);
            if (ps == null) {
                return; // deleted meanwhile: its rollups are meant to be gone
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
