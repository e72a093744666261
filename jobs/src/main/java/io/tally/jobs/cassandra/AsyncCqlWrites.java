package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import com.datastax.oss.driver.api.core.metadata.TokenMap;
import io.tally.model.cassandra.MissingSchemaRefusal;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Asynchronous Cassandra writes, bounded in flight, that a sink waits for before a checkpoint
 * completes. A transient failure (a write timeout, an overloaded or unreachable node, a node
 * behind on the schema) is retried after {@link #RETRY_DELAYS_MS}: every write Tally makes is an
 * idempotent upsert, and a busy node's one slow write restarted the whole job (a checkpoint
 * failed in CI). A failure that outlasts the retries, or any other, fails the next call, so the
 * job restarts from its last checkpoint and rewrites. One refusal is no failure: a write into a
 * keyspace or table that no longer exists, because its namespace was deleted while the write was
 * on its way (the provisioner dropped the keyspace). The deleted namespace's data is meant to be
 * gone, so the write is dropped, counted and logged; restarting would only meet the same refusal
 * again. Since a node behind on the schema refuses alike, a write is dropped only once the
 * cluster agrees the keyspace or table is gone ({@link ClusterSchema}); until then it is retried.
 *
 * <p>On replicated keyspaces a write first asks every replica (ALL) while the driver sees every
 * node up, and only a refusal of that (a replica down or slow) is retried at once at the
 * configured level (LOCAL_QUORUM). A node acknowledges a write before its commit log can replay
 * it after a crash (Cassandra's default periodic sync: ~100 ms, CASSANDRA-13987), so a quorum of
 * two could lose one of its two copies to a kill -9 of a node; when that node was also the
 * coordinator, the third replica's copy could die in its send queue, and LOCAL_QUORUM reads of the
 * other two would never see the write (the three-node suite lost acknowledged events so). With
 * all three copies acknowledged, one node's crash leaves two.
 */
public final class AsyncCqlWrites implements AutoCloseable {
    /**
     * Waits before each retry of a transient failure: about 7 s in all, so a node that is down
     * (not just slow) still restarts the job soon, and even with five attempts each at the
     * request timeout (20 s) the retries end within {@link #flush}'s 120 s.
     */
    static final long[] RETRY_DELAYS_MS = {250, 1_000, 2_000, 4_000};

    private final CqlSession session;
    private final ClusterSchema schema;
    private final Function<Statement<?>, CompletionStage<?>> execute;
    private final long[] retryDelaysMs;
    private final AtomicLong retried = new AtomicLong();
    private final Semaphore inFlight;
    private final int maxInFlight;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final AtomicLong droppedForDeletedNamespace = new AtomicLong();
    private final java.util.Set<String> goneKeyspaces = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final BooleanSupplier everyReplicaFirst;
    private final AtomicLong belowAll = new AtomicLong();

    public AsyncCqlWrites(CassandraEndpoint cassandra, int maxInFlight) {
        this(cassandra.session(), maxInFlight, cassandra.replication().factor() > 1);
    }

    public AsyncCqlWrites(CqlSession session, int maxInFlight) {
        this(session, maxInFlight, false);
    }

    private AsyncCqlWrites(CqlSession session, int maxInFlight, boolean replicated) {
        this(
                session,
                ClusterSchema.of(session),
                session::executeAsync,
                maxInFlight,
                RETRY_DELAYS_MS,
                replicated ? () -> everyNodeUp(session) : () -> false);
    }

    /**
     * With the schema's answers, the call that runs a statement, the retry delays and whether a
     * write asks every replica first, given (unit tests).
     */
    AsyncCqlWrites(
            CqlSession session,
            ClusterSchema schema,
            Function<Statement<?>, CompletionStage<?>> execute,
            int maxInFlight,
            long[] retryDelaysMs,
            BooleanSupplier everyReplicaFirst) {
        this.session = session;
        this.schema = schema;
        this.execute = execute;
        this.maxInFlight = maxInFlight;
        this.inFlight = new Semaphore(maxInFlight);
        this.retryDelaysMs = retryDelaysMs.clone();
        this.everyReplicaFirst = everyReplicaFirst;
    }

    /** Whether the driver sees every node of the cluster up (a node it saw go down is not). */
    static boolean everyNodeUp(CqlSession session) {
        for (Node node : session.getMetadata().getNodes().values()) {
            if (node.getState() != NodeState.UP) {
                return false;
            }
        }
        return true;
    }

    public CqlSession session() {
        return session;
    }

    public void submit(Statement<?> statement) throws IOException, InterruptedException {
        rethrow();
        inFlight.acquire();
        boolean atAll = everyReplicaFirst.getAsBoolean();
        attempt(atAll ? statement.setConsistencyLevel(ConsistencyLevel.ALL) : statement, 0, atAll);
    }

    /** Runs the statement; its permit is released once it succeeded, was dropped or failed for good. */
    private void attempt(Statement<?> statement, int retries, boolean atAll) {
        CompletionStage<?> result;
        try {
            result = execute.apply(statement);
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        result.whenComplete((rs, err) -> {
            if (err == null) {
                inFlight.release();
                return;
            }
            Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
            if (atAll && notEveryReplica(cause)) {
                belowAll.incrementAndGet();
                attempt(statement.setConsistencyLevel(null), retries, false); // at once, at the configured level
                return;
            }
            String keyspace = goneKeyspace(cause);
            if (keyspace == null) {
                retryOrFail(statement, retries, atAll, cause, transientFailure(cause));
                return;
            }
            Table table = tableOf(statement);
            CompletionStage<Boolean> gone = table == null
                    ? CompletableFuture.completedFuture(false) // cannot tell: never drop on a doubt
                    : schema.agreesGone(table.keyspace(), table.name());
            gone.whenComplete((agreed, checkErr) -> {
                if (Boolean.TRUE.equals(agreed)) {
                    dropped(table.keyspace().asInternal(), cause);
                    inFlight.release();
                } else {
                    retryOrFail(statement, retries, atAll, cause, true);
                }
            });
        });
    }

    private void retryOrFail(Statement<?> statement, int retries, boolean atAll, Throwable cause, boolean retriable) {
        if (retriable && retries < retryDelaysMs.length && failure.get() == null) {
            retried.incrementAndGet();
            CompletableFuture.delayedExecutor(retryDelaysMs[retries], TimeUnit.MILLISECONDS)
                    .execute(() -> attempt(statement, retries + 1, atAll));
        } else {
            failure.compareAndSet(null, cause);
            inFlight.release();
        }
    }

    /**
     * Runs a write's schema step (its DDL, its prepare) in the calling thread. A refusal saying
     * the keyspace or table does not exist is retried after {@link #RETRY_DELAYS_MS} until the
     * cluster agrees it is gone: then the write is dropped and this returns null. A transient
     * failure is retried alike; what outlasts the retries is thrown (the job restarts).
     */
    public <T> T schemaStep(String keyspace, String table, java.util.function.Supplier<T> step)
            throws InterruptedException {
        for (int retries = 0; ; retries++) {
            try {
                return step.get();
            } catch (RuntimeException e) {
                boolean goneRefusal = goneKeyspace(e) != null;
                if (goneRefusal && schema.agreesGoneNow(keyspace, table)) {
                    dropped(keyspace, e);
                    return null;
                }
                if (!(goneRefusal || transientFailure(e)) || retries >= retryDelaysMs.length) {
                    throw e;
                }
                retried.incrementAndGet();
                Thread.sleep(retryDelaysMs[retries]);
            }
        }
    }

    /**
     * Whether a failed write may succeed if sent again: the node was slow, overloaded or out of
     * reach. A refused statement (invalid, unauthorized, a syntax error) would only be refused again.
     */
    static boolean transientFailure(Throwable err) {
        return err instanceof com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException
                || err instanceof com.datastax.oss.driver.api.core.servererrors.OverloadedException
                || err instanceof com.datastax.oss.driver.api.core.servererrors.UnavailableException
                || err instanceof com.datastax.oss.driver.api.core.DriverTimeoutException
                || err instanceof com.datastax.oss.driver.api.core.AllNodesFailedException
                || err instanceof com.datastax.oss.driver.api.core.connection.ClosedConnectionException
                || err instanceof com.datastax.oss.driver.api.core.connection.HeartbeatException
                || err instanceof com.datastax.oss.driver.api.core.connection.BusyConnectionException;
    }

    /**
     * A write at ALL that a replica down, slow or failing refused (the configured level may still
     * take it). A replica fails a write of a table it has not pulled yet (a node just restarted);
     * at ALL that failed the job until the node caught up, each restart a new session.
     */
    static boolean notEveryReplica(Throwable err) {
        return err instanceof com.datastax.oss.driver.api.core.servererrors.UnavailableException
                || err instanceof com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException
                || err instanceof com.datastax.oss.driver.api.core.servererrors.WriteFailureException;
    }

    /**
     * Registers this writer's counts as gauges of the sink's metric group, so a node that needs
     * retries (or a deleted namespace's backlog) shows in Prometheus before it restarts a job.
     */
    public AsyncCqlWrites measuredBy(org.apache.flink.metrics.MetricGroup group) {
        group.gauge("cassandraWritesRetried", (org.apache.flink.metrics.Gauge<Long>) this::retried);
        group.gauge("cassandraWritesDroppedForDeletedNamespace", (org.apache.flink.metrics.Gauge<Long>)
                this::droppedForDeletedNamespace);
        group.gauge("cassandraWritesBelowAll", (org.apache.flink.metrics.Gauge<Long>) this::belowAll);
        return this;
    }

    /** Writes that asked every replica and were then written at the configured level, so far. */
    public long belowAll() {
        return belowAll.get();
    }

    /** Writes sent again after a transient failure, so far. */
    public long retried() {
        return retried.get();
    }

    /** One row as an insert, several as one unlogged batch. */
    public void submitAll(java.util.List<BoundStatement> rows) throws IOException, InterruptedException {
        submit(
                rows.size() == 1
                        ? rows.get(0)
                        : BatchStatement.newInstance(BatchType.UNLOGGED, rows.toArray(new BoundStatement[0])));
    }

    /**
     * What tells a row's keyspace and replica set ({@link ReplicaBatches}), or null when the
     * driver knows no token map. The keyspace is part of it so that a batch never spans keyspaces:
     * a namespace deleted meanwhile makes only its own rows fail (and be dropped).
     */
    public Object replicasOf(BoundStatement row) {
        ByteBuffer key = row.getRoutingKey();
        CqlIdentifier keyspace = row.getRoutingKeyspace();
        if (key == null || keyspace == null) {
            return null;
        }
        if (session.getMetadata().getNodes().size() == 1) {
            return keyspace; // one node holds every partition: no token lookup per row (17% of a rollup writer's time)
        }
        Optional<TokenMap> tokens = session.getMetadata().getTokenMap();
        if (tokens.isEmpty()) {
            return null;
        }
        return java.util.List.of(keyspace, tokens.get().getReplicas(keyspace, key));
    }

    /**
     * The keyspace named by a refusal that says the keyspace or table does not exist (a namespace
     * deleted meanwhile), else null: every other error is a failure.
     */
    public static String goneKeyspace(Throwable err) {
        if (!(err instanceof com.datastax.oss.driver.api.core.servererrors.InvalidQueryException)) {
            return null;
        }
        return MissingSchemaRefusal.keyspaceOf(err.getMessage());
    }

    /** The keyspace and table a bound statement (or a batch's first) writes to. */
    record Table(CqlIdentifier keyspace, CqlIdentifier name) {}

    /** The table a write goes to, or null when the statement does not tell (not a bound one). */
    static Table tableOf(Statement<?> statement) {
        Statement<?> row = statement instanceof BatchStatement batch && batch.size() > 0
                ? batch.iterator().next()
                : statement;
        if (!(row instanceof BoundStatement bound)
                || bound.getPreparedStatement().getVariableDefinitions().size() == 0) {
            return null;
        }
        var column = bound.getPreparedStatement().getVariableDefinitions().get(0);
        return new Table(column.getKeyspace(), column.getTable());
    }

    /** Counts and logs a write dropped because its namespace's storage is gone. */
    private void dropped(String keyspace, Throwable err) {
        droppedForDeletedNamespace.incrementAndGet();
        if (goneKeyspaces.add(keyspace)) { // once a keyspace: a deleted namespace's backlog is many rows
            org.slf4j.LoggerFactory.getLogger(AsyncCqlWrites.class)
                    .warn(
                            "dropping writes into {}: its namespace was deleted meanwhile ({})",
                            keyspace,
                            err.getMessage());
        }
    }

    /** Writes dropped so far because their namespace was deleted while they were on their way. */
    public long droppedForDeletedNamespace() {
        return droppedForDeletedNamespace.get();
    }

    /** Keyspaces found gone (the writer forgets its cached tables of them). */
    public java.util.Set<String> goneKeyspaces() {
        return goneKeyspaces;
    }

    /** Waits for every write in flight: called before a checkpoint and at the end of input. */
    public void flush() throws IOException, InterruptedException {
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
    public void close() {
        session.close();
    }
}
