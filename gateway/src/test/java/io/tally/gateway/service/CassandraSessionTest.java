package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.metadata.Metadata;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.TokenMap;
import com.datastax.oss.driver.api.core.metadata.schema.KeyspaceMetadata;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import com.datastax.oss.driver.internal.core.metadata.DefaultMetadata;
import com.datastax.oss.driver.internal.core.metadata.schema.DefaultKeyspaceMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The readers' schema: the driver's metadata once it holds a keyspace; while it holds none (its
 * first schema read failed), reads are refused and the driver is asked to read it again, not told
 * that every table is absent. Cassandra is not running here and is never asked.
 */
class CassandraSessionTest {
    final CassandraSession cassandra = new CassandraSession("127.0.0.1:1");
    final AtomicInteger refreshes = new AtomicInteger();

    record SchemaOf(Map<CqlIdentifier, KeyspaceMetadata> getKeyspaces) implements Metadata {
        @Override
        public Map<UUID, Node> getNodes() {
            return Map.of();
        }

        @Override
        public Optional<TokenMap> getTokenMap() {
            return Optional.empty();
        }
    }

    static Metadata withKeyspace(String name) {
        CqlIdentifier id = CqlIdentifier.fromInternal(name);
        return new SchemaOf(Map.of(
                id,
                new DefaultKeyspaceMetadata(
                        id, true, false, Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), Map.of())));
    }

    @Test
    void aSchemaWithAKeyspaceIsTheAnswerAndNothingIsReadAgain() {
        Metadata loaded = withKeyspace("tally_meta");
        assertThat(cassandra.loadedOrRefused(loaded, refreshes::incrementAndGet))
                .isSameAs(loaded);
        assertThat(refreshes).hasValue(0);
    }

    @Test
    void anEmptySchemaRefusesTheReadAndAsksForTheSchemaAtMostEveryFewSeconds() {
        for (int i = 0; i < 5; i++) {
            assertThatThrownBy(() -> cassandra.loadedOrRefused(DefaultMetadata.EMPTY, refreshes::incrementAndGet))
                    .isInstanceOfSatisfying(ServiceException.class, e -> {
                        assertThat(e.errorCode()).isEqualTo(ErrorCode.CASSANDRA_UNAVAILABLE);
                        assertThat(e.kind()).isEqualTo(ServiceException.Kind.UNAVAILABLE);
                    })
                    .hasMessageContaining("schema");
        }
        assertThat(refreshes)
                .as("one refresh for five reads within the interval")
                .hasValue(1);
        // once the schema is read, reads go on
        assertThat(cassandra.loadedOrRefused(withKeyspace("ns_playback"), refreshes::incrementAndGet))
                .isNotNull();
    }

    @Test
    void aPrepareRefusedForATableTheSchemaListsIsAskedAgainUntilTheNodeKnowsIt() {
        List<Long> pauses = new ArrayList<>();
        AtomicInteger asks = new AtomicInteger();
        String prepared = CassandraSession.untilSchemaSettles(
                () -> {
                    if (asks.incrementAndGet() < 4) {
                        throw new InvalidQueryException(null, "table events_20261206 does not exist");
                    }
                    return "prepared";
                },
                2_000,
                pauses::add);
        assertThat(prepared).isEqualTo("prepared");
        assertThat(pauses).as("growing pauses between the asks").containsExactly(25L, 50L, 100L);
    }

    @Test
    void aTableStillMissingWhenTheBudgetIsSpentIsRefusedAsCassandraSaid() {
        List<Long> pauses = new ArrayList<>();
        assertThatThrownBy(() -> alwaysRefused("unconfigured table counter_rollups", 300, pauses))
                .isInstanceOf(InvalidQueryException.class)
                .hasMessageContaining("unconfigured table");
        assertThat(pauses.stream().mapToLong(Long::longValue).sum())
                .as("waited the budget, no more")
                .isEqualTo(300);
    }

    @Test
    void anyOtherRefusalIsPassedOnAtOnce() {
        List<Long> pauses = new ArrayList<>();
        assertThatThrownBy(() -> alwaysRefused("Undefined column name nope", 2_000, pauses))
                .hasMessageContaining("Undefined column");
        assertThat(pauses).isEmpty();
    }

    /** Prepares, against a node that refuses every ask with this message, within this budget. */
    private static String alwaysRefused(String message, long budgetMillis, List<Long> pauses) {
        return CassandraSession.untilSchemaSettles(
                () -> {
                    throw new InvalidQueryException(null, message);
                },
                budgetMillis,
                pauses::add);
    }
}
