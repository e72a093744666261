package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.loadbalancing.NodeDistance;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What every node the driver sees up says of its own schema, each asked directly: its schema
 * version (its {@code system.local}) and, given a keyspace, whether its own
 * {@code system_schema} has that keyspace (and table). The driver's schema agreement asks one
 * node, the control connection's, for its version and for its peers' as it lists them in
 * {@code system.peers}; a node just back from a kill -9 still lists there the versions its peers
 * had before the kill, equal to its own, so while it has not pulled what changed meanwhile the
 * driver reports agreement, and its schema (the driver's view, when it is the control node)
 * lacks the new tables. The three-node suite lost an acknowledged partition when a writer took
 * such a table for a deleted namespace's.
 */
public final class NodeSchemas {
    /** One node's answer: its schema version and whether it has the asked-for keyspace or table. */
    public record Answer(UUID version, boolean has) {}

    private NodeSchemas() {}

    /**
     * Asks every node the driver sees up, directly; completes with one answer a node, or fails
     * when any node does not answer (a node that cannot tell is no evidence either way).
     *
     * @param keyspace the keyspace to look for, or null to ask only for versions
     * @param table the table of it to look for, or null for the keyspace alone
     */
    public static CompletionStage<List<Answer>> ask(CqlSession session, CqlIdentifier keyspace, CqlIdentifier table) {
        List<CompletableFuture<Answer>> asked = new ArrayList<>();
        for (Node node : reached(session)) {
            if (node.getState() == NodeState.UP) {
                asked.add(ask(session, node, keyspace, table));
            }
        }
        return CompletableFuture.allOf(asked.toArray(new CompletableFuture<?>[0]))
                .thenApply(done -> asked.stream().map(CompletableFuture::join).toList());
    }

    /**
     * The nodes the session talks to: every node it knows but those it ignores (by default the
     * nodes of other datacenters, which it opens no connection to and so cannot ask).
     */
    public static List<Node> reached(CqlSession session) {
        return session.getMetadata().getNodes().values().stream()
                .filter(n -> n.getDistance() != NodeDistance.IGNORED)
                .toList();
    }

    private static CompletableFuture<Answer> ask(
            CqlSession session, Node node, CqlIdentifier keyspace, CqlIdentifier table) {
        CompletionStage<UUID> version = session.executeAsync(on(
                        node,
                        SimpleStatement.newInstance("SELECT schema_version FROM system.local WHERE key = 'local'")))
                .thenApply(rs -> {
                    var row = rs.one();
                    if (row == null || row.getUuid(0) == null) {
                        throw new IllegalStateException(node + " has no schema version in system.local");
                    }
                    return row.getUuid(0);
                });
        CompletionStage<Boolean> has;
        if (keyspace == null) {
            has = CompletableFuture.completedFuture(false);
        } else if (table == null) {
            has = session.executeAsync(on(
                            node,
                            SimpleStatement.newInstance(
                                    "SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?",
                                    keyspace.asInternal())))
                    .thenApply(NodeSchemas::any);
        } else {
            has = session.executeAsync(on(
                            node,
                            SimpleStatement.newInstance(
                                    "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
                                    keyspace.asInternal(),
                                    table.asInternal())))
                    .thenApply(NodeSchemas::any);
        }
        return version.thenCombine(has, Answer::new).toCompletableFuture();
    }

    /** A node's own system tables, whatever the session's consistency level (they are local). */
    private static SimpleStatement on(Node node, SimpleStatement statement) {
        return statement.setNode(node).setConsistencyLevel(ConsistencyLevel.ONE);
    }

    private static boolean any(AsyncResultSet rs) {
        return rs.one() != null;
    }

    /** Whether the answers share one schema version (no answers: no agreement). */
    public static boolean agree(List<Answer> answers) {
        Set<UUID> versions = new HashSet<>();
        answers.forEach(a -> versions.add(a.version()));
        return versions.size() == 1;
    }

    /**
     * Whether the answers say the keyspace or table is gone from the cluster: every node the
     * session reaches answered (a node down may be the one that has it: a table made on it just
     * before it died had not reached the others), they agree on one schema version, and none of
     * them has it.
     *
     * @param clusterNodes every node the session reaches ({@link #reached}), up or not
     */
    public static boolean gone(List<Answer> answers, int clusterNodes) {
        return !answers.isEmpty()
                && answers.size() == clusterNodes
                && agree(answers)
                && answers.stream().noneMatch(Answer::has);
    }

    /** Whether every node the driver sees up, asked directly, reports the same schema version. */
    public static boolean agree(CqlSession session) {
        try {
            return agree(ask(session, null, null).toCompletableFuture().get());
        } catch (java.util.concurrent.ExecutionException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted asking the Cassandra nodes for their schema", e);
        }
    }
}
