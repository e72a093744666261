package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Where the jobs' DDL goes. A node applies schema changes one at a time, so a second CREATE ...
 * IF NOT EXISTS of a table on it does nothing; but two nodes that each take one at once both
 * create the table, under two ids, and a node left with the losing id refuses reads and writes
 * of it for good (INCOMPATIBLE_SCHEMA; the three-node suite met it when the counter and the
 * TimeSeries job made a new namespace's keyspace at once). So every statement goes to one node,
 * the live node with the lowest host id, and only once the live nodes, each asked for its own
 * version ({@link NodeSchemas}), agree on the schema: a node just restarted that has not pulled a
 * table yet would create it anew. Nodes that still disagree after {@link #AGREEMENT_WAIT} fail
 * the change (the job restarts and tries again) rather than risk a second table id. One race is
 * left that no waiting closes: the node takes a CREATE, dies before the others have it, and the
 * retry goes to the next node; so every table is created with the id its creators all derive
 * ({@link io.tally.model.cassandra.TableIds}), and the second CREATE makes the same table.
 */
public final class SchemaChanges {
    /** How long a change waits for the live nodes to agree before it fails. */
    static final Duration AGREEMENT_WAIT = Duration.ofSeconds(60);

    private SchemaChanges() {}

    /** Runs one DDL statement (built by the model, never from raw input) on the schema's node. */
    public static void execute(CqlSession session, String ddl) {
        awaitAgreement(session);
        SimpleStatement statement = SimpleStatement.newInstance(ddl);
        Node node = coordinator(
                        session.getMetadata().getNodes().values(), n -> n.getState() == NodeState.UP, Node::getHostId)
                .orElse(null);
        session.execute(node == null ? statement : statement.setNode(node));
    }

    /** The node every job sends its DDL to: the live one with the lowest host id (the same for all). */
    static <N> Optional<N> coordinator(Collection<N> nodes, Predicate<N> up, Function<N, UUID> hostId) {
        return nodes.stream().filter(up).filter(n -> hostId.apply(n) != null).min(Comparator.comparing(hostId));
    }

    private static void awaitAgreement(CqlSession session) {
        long deadline = System.nanoTime() + AGREEMENT_WAIT.toNanos();
        while (!NodeSchemas.agree(session)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the Cassandra nodes up still disagree on the schema after "
                        + AGREEMENT_WAIT + ": no schema change until they agree (a node behind would make"
                        + " a table anew under a second id)");
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for schema agreement", e);
            }
        }
    }
}
