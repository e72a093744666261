package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.metadata.Metadata;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Asks the cluster whether a keyspace (or a table of it) that a write was refused for is really
 * gone. A node answers "does not exist" both for a namespace deleted meanwhile (its writes are
 * meant to be dropped) and for a table it has not pulled yet (a node just restarted: its writes
 * must be retried). Only the live nodes, each asked for its own schema ({@link NodeSchemas}),
 * can tell the two apart: the driver's cached view could not, nor its schema agreement, which
 * believes a restarted control node's stale list of its peers (the three-node suite lost
 * acknowledged events to each).
 */
@FunctionalInterface
public interface ClusterSchema {
    /**
     * Completes true only when every node the session reaches (its datacenter's) is up and
     * answers, all on one schema version, and none of them has the keyspace (or, given one, its
     * table); false otherwise or on any error. With a node down nothing is dropped: the writes are retried, then the job restarts,
     * until the node is back.
     */
    CompletionStage<Boolean> agreesGone(CqlIdentifier keyspace, CqlIdentifier table);

    /**
     * {@link #agreesGone}, waited for (at most 30 s; no answer in time is no agreement), for the
     * callers that run on a task's thread. Names are Cassandra's internal (unquoted) ones.
     */
    default boolean agreesGoneNow(String keyspace, String table) throws InterruptedException {
        try {
            return agreesGone(
                            CqlIdentifier.fromInternal(keyspace),
                            table == null ? null : CqlIdentifier.fromInternal(table))
                    .toCompletableFuture()
                    .get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return false;
        }
    }

    static ClusterSchema of(CqlSession session) {
        return (keyspace, table) -> NodeSchemas.ask(session, keyspace, table)
                .thenApply(answers ->
                        NodeSchemas.gone(answers, NodeSchemas.reached(session).size()))
                .exceptionally(err -> false);
    }

    /** Whether the metadata has the keyspace and, if given, its table. */
    static boolean has(Metadata metadata, CqlIdentifier keyspace, CqlIdentifier table) {
        return metadata.getKeyspace(keyspace)
                .map(k -> table == null || k.getTable(table).isPresent())
                .orElse(false);
    }

    /**
     * Whether the driver's view already has the table: its DDL is not sent again. A CREATE ... IF
     * NOT EXISTS that reaches a node behind on the schema would create the table there anew.
     */
    static boolean has(CqlSession session, String keyspace, String table) {
        return has(session.getMetadata(), CqlIdentifier.fromInternal(keyspace), CqlIdentifier.fromInternal(table));
    }
}
