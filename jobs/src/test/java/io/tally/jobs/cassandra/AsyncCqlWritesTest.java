package io.tally.jobs.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.NoNodeAvailableException;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.WriteType;
import java.io.IOException;
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
        assertThat(AsyncCqlWrites.goneKeyspace(
                        new InvalidQueryException(null, "Keyspace 'ns_it_cpc_266eb1_0' doesn't exist")))
                .isEqualTo("ns_it_cpc_266eb1_0");
        assertThat(AsyncCqlWrites.goneKeyspace(new InvalidQueryException(null, "Keyspace ns_x does not exist")))
                .isEqualTo("ns_x");
        // an unlogged batch's refusal (seen in CI: the writer restarted on it)
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
        return new AsyncCqlWrites(
                null,
                statement -> attempts.incrementAndGet() <= failures
                        ? CompletableFuture.failedFuture(error)
                        : CompletableFuture.completedFuture(null),
                4,
                new long[] {1, 1, 1});
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
}
