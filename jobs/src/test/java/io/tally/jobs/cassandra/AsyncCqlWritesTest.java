package io.tally.jobs.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.NoNodeAvailableException;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ColumnDefinitions;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.WriteType;
import com.datastax.oss.driver.internal.core.cql.DefaultColumnDefinition;
import com.datastax.oss.driver.internal.core.cql.DefaultColumnDefinitions;
import com.datastax.oss.protocol.internal.ProtocolConstants;
import com.datastax.oss.protocol.internal.response.result.ColumnSpec;
import com.datastax.oss.protocol.internal.response.result.RawType;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Which Cassandra refusals mean "the namespace was deleted meanwhile" (dropped), not a failure;
 * which failures are retried, and that a failure outlasting the retries still fails the flush.
 */
class AsyncCqlWritesTest {
    @Test
    void aKeyspaceOrTableThatIsGoneIsNamed() {
        // the wordings themselves: MissingSchemaRefusalTest (model)
        assertThat(AsyncCqlWrites.goneKeyspace(
                        new InvalidQueryException(null, "keyspace ns_it_cpc_82b8f5_1 does not exist")))
                .isEqualTo("ns_it_cpc_82b8f5_1");
        assertThat(AsyncCqlWrites.goneKeyspace(new InvalidQueryException(null, "unconfigured table events_20261123")))
                .isNotNull();
    }

    @Test
    void anythingElseIsAFailure() {
        assertThat(AsyncCqlWrites.goneKeyspace(new InvalidQueryException(null, "Invalid STRING constant")))
                .isNull();
        assertThat(AsyncCqlWrites.goneKeyspace(new RuntimeException("Keyspace 'x' doesn't exist")))
                .isNull();
        assertThat(AsyncCqlWrites.goneKeyspace(new WriteTimeoutException(
                        null,
                        com.datastax.oss.driver.api.core.ConsistencyLevel.ONE,
                        0,
                        1,
                        com.datastax.oss.driver.api.core.servererrors.WriteType.SIMPLE)))
                .isNull();
    }

    private static WriteTimeoutException writeTimeout() {
        return new WriteTimeoutException(null, ConsistencyLevel.ONE, 0, 1, WriteType.UNLOGGED_BATCH);
    }

    /** Writes whose first `failures` attempts fail with the given error, then succeed. */
    private static AsyncCqlWrites failingFirst(int failures, RuntimeException error, AtomicInteger attempts) {
        return failingFirst(failures, error, attempts, (keyspace, table) -> {
            throw new AssertionError("a failure that names no keyspace needs no schema check");
        });
    }

    private static AsyncCqlWrites failingFirst(
            int failures, RuntimeException error, AtomicInteger attempts, ClusterSchema schema) {
        return new AsyncCqlWrites(
                null,
                schema,
                statement -> attempts.incrementAndGet() <= failures
                        ? CompletableFuture.failedFuture(error)
                        : CompletableFuture.completedFuture(null),
                4,
                new long[] {1, 1, 1},
                () -> false);
    }

    /** Writes that ask every replica first, failing the attempts at ALL with the given error. */
    private static AsyncCqlWrites refusedAtAll(RuntimeException error, List<ConsistencyLevel> levels) {
        return new AsyncCqlWrites(
                null,
                (keyspace, table) -> CompletableFuture.completedFuture(false),
                statement -> {
                    levels.add(statement.getConsistencyLevel());
                    return statement.getConsistencyLevel() == ConsistencyLevel.ALL
                            ? CompletableFuture.failedFuture(error)
                            : CompletableFuture.completedFuture(null);
                },
                4,
                new long[] {1, 1, 1},
                () -> true);
    }

    @Test
    void aReplicatedWriteAsksEveryReplicaFirstAndOneDownIsWrittenAtTheConfiguredLevelAtOnce() throws Exception {
        List<ConsistencyLevel> levels = new java.util.ArrayList<>();
        AsyncCqlWrites writes = refusedAtAll(
                new com.datastax.oss.driver.api.core.servererrors.UnavailableException(
                        null, ConsistencyLevel.ALL, 3, 2),
                levels);
        writes.submit(SimpleStatement.newInstance("INSERT"));
        writes.flush();
        assertThat(levels).containsExactly(ConsistencyLevel.ALL, null); // null: the session's level
        assertThat(writes.belowAll()).isEqualTo(1);
        assertThat(writes.retried()).isZero();
    }

    @Test
    void aReplicaTooSlowForAllIsWrittenAtTheConfiguredLevel() throws Exception {
        List<ConsistencyLevel> levels = new java.util.ArrayList<>();
        AsyncCqlWrites writes = refusedAtAll(
                new WriteTimeoutException(null, ConsistencyLevel.ALL, 2, 3, WriteType.UNLOGGED_BATCH), levels);
        writes.submit(SimpleStatement.newInstance("INSERT"));
        writes.flush();
        assertThat(levels).containsExactly(ConsistencyLevel.ALL, null);
    }

    @Test
    void aReplicaFailingTheWriteAtAllIsWrittenAtTheConfiguredLevel() throws Exception {
        // a node back from a kill that has not pulled the table yet fails its replica's write
        List<ConsistencyLevel> levels = new java.util.ArrayList<>();
        AsyncCqlWrites writes = refusedAtAll(
                new com.datastax.oss.driver.api.core.servererrors.WriteFailureException(
                        null, ConsistencyLevel.ALL, 2, 3, WriteType.UNLOGGED_BATCH, 1, java.util.Map.of()),
                levels);
        writes.submit(SimpleStatement.newInstance("INSERT"));
        writes.flush();
        assertThat(levels).containsExactly(ConsistencyLevel.ALL, null);
        assertThat(writes.belowAll()).isEqualTo(1);
    }

    @Test
    void aWriteOfOneNodeOrWithANodeDownKeepsTheConfiguredLevel() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        List<ConsistencyLevel> levels = new java.util.ArrayList<>();
        AsyncCqlWrites writes = new AsyncCqlWrites(
                null,
                (keyspace, table) -> CompletableFuture.completedFuture(false),
                statement -> {
                    attempts.incrementAndGet();
                    levels.add(statement.getConsistencyLevel());
                    return CompletableFuture.completedFuture(null);
                },
                4,
                new long[] {1},
                () -> false);
        writes.submit(SimpleStatement.newInstance("INSERT").setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM));
        writes.flush();
        assertThat(levels).containsExactly(ConsistencyLevel.LOCAL_QUORUM);
        assertThat(writes.belowAll()).isZero();
    }

    @Test
    void aWriteTimeoutIsRetriedAndTheFlushSucceeds() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AsyncCqlWrites writes = failingFirst(2, writeTimeout(), attempts);
        writes.submit(SimpleStatement.newInstance("INSERT"));
        writes.flush();
        assertThat(attempts).hasValue(3);
        assertThat(writes.retried()).isEqualTo(2);
    }

    @Test
    void aFailureThatOutlastsTheRetriesFailsTheFlush() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AsyncCqlWrites writes = failingFirst(100, new NoNodeAvailableException(), attempts);
        writes.submit(SimpleStatement.newInstance("INSERT"));
        assertThatThrownBy(writes::flush)
                .isInstanceOf(IOException.class)
                .hasCauseInstanceOf(NoNodeAvailableException.class);
        assertThat(attempts).hasValue(4); // the first and three retries
    }

    @Test
    void aRefusedStatementIsNotRetried() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AsyncCqlWrites writes = failingFirst(1, new InvalidQueryException(null, "Invalid STRING constant"), attempts);
        writes.submit(SimpleStatement.newInstance("INSERT"));
        assertThatThrownBy(writes::flush).isInstanceOf(IOException.class);
        assertThat(attempts).hasValue(1);
        assertThat(writes.retried()).isZero();
    }

    @Test
    void slowOrUnreachableNodesAreTransientRefusalsAreNot() {
        assertThat(AsyncCqlWrites.transientFailure(writeTimeout())).isTrue();
        assertThat(AsyncCqlWrites.transientFailure(new NoNodeAvailableException()))
                .isTrue();
        assertThat(AsyncCqlWrites.transientFailure(new InvalidQueryException(null, "x")))
                .isFalse();
        assertThat(AsyncCqlWrites.transientFailure(new IllegalStateException("x")))
                .isFalse();
    }

    private static final InvalidQueryException NOT_PULLED_YET =
            new InvalidQueryException(null, "table events_20261126 does not exist");

    private static ClusterSchema answering(boolean gone, AtomicInteger asked) {
        return (keyspace, table) -> {
            asked.incrementAndGet();
            return CompletableFuture.completedFuture(gone);
        };
    }

    /** A bound insert into ns_playback.events_20261126 (a refusal's table is read from its statement). */
    private static BoundStatement insertIntoASlice() {
        ColumnDefinitions columns = DefaultColumnDefinitions.valueOf(List.of(new DefaultColumnDefinition(
                new ColumnSpec(
                        "ns_playback",
                        "events_20261126",
                        "time_series_id",
                        0,
                        RawType.PRIMITIVES.get(ProtocolConstants.DataType.VARCHAR)),
                null)));
        PreparedStatement prepared = (PreparedStatement) Proxy.newProxyInstance(
                PreparedStatement.class.getClassLoader(), new Class<?>[] {PreparedStatement.class}, (p, m, a) -> {
                    if (m.getName().equals("getVariableDefinitions")) {
                        return columns;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
        return (BoundStatement) Proxy.newProxyInstance(
                BoundStatement.class.getClassLoader(), new Class<?>[] {BoundStatement.class}, (p, m, a) -> {
                    if (m.getName().equals("getPreparedStatement")) {
                        return prepared;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
    }

    @Test
    void aTableANodeHasNotPulledYetIsRetriedNotDropped() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AtomicInteger asked = new AtomicInteger();
        AsyncCqlWrites writes = failingFirst(2, NOT_PULLED_YET, attempts, answering(false, asked));
        writes.submit(insertIntoASlice());
        writes.flush();
        assertThat(attempts).hasValue(3);
        assertThat(asked).hasValue(2);
        assertThat(writes.droppedForDeletedNamespace()).isZero();
    }

    @Test
    void aRefusalTheClusterNeverAgreesOnFailsTheFlushRatherThanDrop() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AsyncCqlWrites writes = failingFirst(100, NOT_PULLED_YET, attempts, answering(false, new AtomicInteger()));
        writes.submit(insertIntoASlice());
        assertThatThrownBy(writes::flush).isInstanceOf(IOException.class).hasCause(NOT_PULLED_YET);
        assertThat(writes.droppedForDeletedNamespace()).isZero();
    }

    @Test
    void aTableTheClusterAgreesIsGoneIsDropped() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AsyncCqlWrites writes = failingFirst(100, NOT_PULLED_YET, attempts, answering(true, new AtomicInteger()));
        writes.submit(insertIntoASlice());
        writes.flush();
        assertThat(attempts).hasValue(1);
        assertThat(writes.droppedForDeletedNamespace()).isEqualTo(1);
        assertThat(writes.goneKeyspaces()).containsExactly("ns_playback");
    }

    @Test
    void aRefusalOfAStatementThatNamesNoTableIsNeverDropped() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AsyncCqlWrites writes = failingFirst(100, NOT_PULLED_YET, attempts, answering(true, new AtomicInteger()));
        writes.submit(SimpleStatement.newInstance("INSERT"));
        assertThatThrownBy(writes::flush).isInstanceOf(IOException.class);
        assertThat(writes.droppedForDeletedNamespace()).isZero();
    }

    @Test
    void aSchemaStepIsRetriedWhileTheClusterDisagreesAndDroppedOnceItAgrees() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        AtomicInteger steps = new AtomicInteger();
        AsyncCqlWrites lagging = failingFirst(0, null, new AtomicInteger(), answering(false, asked));
        assertThat(lagging.schemaStep("ns_playback", "events_20261126", () -> {
                    if (steps.incrementAndGet() <= 2) {
                        throw NOT_PULLED_YET;
                    }
                    return "prepared";
                }))
                .isEqualTo("prepared");
        assertThat(asked).hasValue(2);

        AsyncCqlWrites deleted = failingFirst(0, null, new AtomicInteger(), answering(true, new AtomicInteger()));
        assertThat(deleted.<String>schemaStep("ns_gone", "events_20261126", () -> {
                    throw NOT_PULLED_YET;
                }))
                .isNull();
        assertThat(deleted.droppedForDeletedNamespace()).isEqualTo(1);
    }

    @Test
    void aSchemaStepsOtherRefusalIsThrownAtOnce() {
        AtomicInteger steps = new AtomicInteger();
        AsyncCqlWrites writes = failingFirst(0, null, new AtomicInteger(), answering(true, new AtomicInteger()));
        InvalidQueryException syntax = new InvalidQueryException(null, "line 1:0 no viable alternative");
        assertThatThrownBy(() -> writes.schemaStep("ns_playback", "t", () -> {
                    steps.incrementAndGet();
                    throw syntax;
                }))
                .isSameAs(syntax);
        assertThat(steps).hasValue(1);
    }
}
