package io.tally.jobs.provision;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import io.tally.jobs.cassandra.ClusterSchema;
import io.tally.jobs.cassandra.SchemaChanges;
import io.tally.model.Bytes;
import io.tally.model.Micros;
import io.tally.model.cassandra.CounterLogBaseTable;
import io.tally.model.cassandra.MissingSchemaRefusal;
import io.tally.model.cassandra.SliceTable;
import io.tally.namespace.CounterFold;
import io.tally.namespace.CounterLogFold;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;

/**
 * Folds a counter event log's slice into each counter's base before retention drops it
 * ({@link CounterLogBaseTable}). Safe to repeat after a crash: a counter whose base already
 * reaches the slice's end is left as it is, so a slice is folded into a base once.
 */
final class CounterLogBases {
    /** Base reads and writes in flight at once. */
    static final int IN_FLIGHT = 256;
    /** Rows a page of the slice scan. */
    static final int PAGE_SIZE = 5_000;

    private final CqlSession session;

    CounterLogBases(CqlSession session) {
        this.session = session;
    }

    /** Each counter's base becomes its count before endMicros, the slice's events folded in. */
    void fold(String keyspace, long namespaceCreatedMicros, String table, long endMicros) {
        if (!ClusterSchema.has(session, keyspace, CounterLogBaseTable.TABLE)) {
            SchemaChanges.execute(session, CounterLogBaseTable.create(keyspace, namespaceCreatedMicros));
        }
        CounterLogFold fold = new CounterLogFold();
        if (!scan(keyspace, table, fold::first)) {
            return; // no such table: nothing to fold
        }
        if (fold.needsSecondPass()) {
            scan(keyspace, table, fold::second);
        }
        PreparedStatement select = session.prepare(CounterLogBaseTable.select(keyspace));
        PreparedStatement upsert = session.prepare(CounterLogBaseTable.upsert(keyspace));
        Instant until = Micros.toInstant(endMicros);
        List<String> counters = new ArrayList<>(fold.counters());
        for (int from = 0; from < counters.size(); from += IN_FLIGHT) {
            List<String> chunk = counters.subList(from, Math.min(counters.size(), from + IN_FLIGHT));
            List<CompletableFuture<?>> writes = new ArrayList<>();
            for (String counter : chunk) {
                CompletionStage<?> write = session.executeAsync(select.bind(counter))
                        .thenCompose(rs -> {
                            Row base = rs.one();
                            Instant baseUntil = base == null ? null : base.getInstant("until");
                            if (baseUntil != null && Micros.of(baseUntil) >= endMicros) {
                                return CompletableFuture.completedFuture(null); // folded before
                            }
                            long start = base == null ? 0 : base.getLong("count");
                            return session.executeAsync(upsert.bind(counter, fold.foldOnto(counter, start), until));
                        });
                writes.add(write.toCompletableFuture());
            }
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
        }
    }

    /** Every counter mutation of the slice to the consumer; false when the table does not exist. */
    private boolean scan(String keyspace, String table, BiConsumer<String, CounterFold.Mutation> to) {
        SimpleStatement all =
                SimpleStatement.newInstance(SliceTable.scanAll(keyspace, table)).setPageSize(PAGE_SIZE);
        try {
            for (Row r : session.execute(all)) {
                byte[] value = Bytes.of(r.getByteBuffer("event_item_value"));
                CounterFold.Mutation m =
                        CounterFold.fromItem(r.getLong("event_time"), r.getString("event_item_key"), value);
                if (m != null) {
                    to.accept(r.getString("time_series_id"), m);
                }
            }
            return true;
        } catch (InvalidQueryException e) {
            if (MissingSchemaRefusal.saysMissing(e.getMessage())) {
                return false;
            }
            throw e;
        }
    }
}
