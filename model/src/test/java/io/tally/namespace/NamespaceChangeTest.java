package io.tally.namespace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class NamespaceChangeTest {
    static final String CONFIG = "{\\\"kind\\\": \\\"timeseries\\\", \\\"accept_limit\\\": \\\"7s\\\"}";

    static byte[] event(String op, String before, String after) {
        return ("{\"before\":" + before + ",\"after\":" + after
                        + ",\"source\":{\"connector\":\"postgresql\",\"table\":\"namespaces\"}," + "\"op\":\"" + op
                        + "\",\"ts_ms\":1}")
                .getBytes(StandardCharsets.UTF_8);
    }

    static String row(String name, long version) {
        return "{\"name\":\"" + name + "\",\"kind\":\"timeseries\",\"config\":\"" + CONFIG + "\",\"version\":" + version
                + ",\"updated_at\":\"2026-11-22T21:00:00Z\"}";
    }

    @Test
    void snapshotReadsCreatesAndUpdatesCarryTheRowAfter() {
        for (String op : new String[] {"r", "c", "u"}) {
            NamespaceChange c = NamespaceChange.fromDebezium(event(op, "null", row("clicks", 3)))
                    .orElseThrow();
            assertThat(c.name).isEqualTo("clicks");
            assertThat(c.version).isEqualTo(3);
            assertThat(c.deleted).isFalse();
            assertThat(c.config().acceptLimit().toSeconds()).isEqualTo(7);
        }
    }

    @Test
    void aDeleteCarriesTheRowItRemoved() {
        NamespaceChange c = NamespaceChange.fromDebezium(event("d", row("clicks", 4), "null"))
                .orElseThrow();
        assertThat(c.deleted).isTrue();
        assertThat(c.version).isEqualTo(4);
        assertThat(c.config().name()).isEqualTo("clicks");
    }

    @Test
    void theRowsCreationTimeTellsANamespaceCreatedAgainApart() {
        String plain = row("clicks", 1);
        String created = plain.substring(0, plain.length() - 1) + ",\"created_at\":\"2026-11-24T02:30:00.123456Z\"}";
        NamespaceChange c =
                NamespaceChange.fromDebezium(event("c", "null", created)).orElseThrow();
        assertThat(c.createdMicros).isEqualTo(1_795_487_400_123_456L);
        NamespaceCatalog catalog = new NamespaceCatalog();
        catalog.apply(c);
        assertThat(catalog.createdMicros("clicks")).isEqualTo(1_795_487_400_123_456L);
        // rows of an earlier release have no created_at: unknown, not a parse failure
        assertThat(NamespaceChange.fromDebezium(event("c", "null", row("clicks", 1)))
                        .orElseThrow()
                        .createdMicros)
                .isZero();
        assertThat(NamespaceChange.createdMicros(
                        com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.numberNode(42L)))
                .isEqualTo(42);
    }

    @Test
    void tombstonesAndOtherRowsAreNotChanges() {
        assertThat(NamespaceChange.fromDebezium(null)).isEmpty();
        assertThat(NamespaceChange.fromDebezium(event("c", "null", "{\"id\":1,\"note\":\"probe\"}")))
                .isEmpty();
        assertThatThrownBy(() -> NamespaceChange.fromDebezium("{".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aCatalogAppliesUpsertsAndDeletes() {
        NamespaceCatalog catalog = new NamespaceCatalog();
        catalog.apply(NamespaceChange.fromDebezium(event("c", "null", row("clicks", 1)))
                .orElseThrow());
        assertThat(catalog.get("clicks")).isPresent();
        catalog.apply(NamespaceChange.fromDebezium(event("d", row("clicks", 1), "null"))
                .orElseThrow());
        assertThat(catalog.get("clicks")).isEmpty();
    }

    @Test
    void aCounterAcceptWindowIsBoundedByTheDedupMemory() {
        assertThatThrownBy(() -> NamespaceConfigParser.parse(
                        "c", "{\"kind\":\"counter\",\"counter_type\":\"EVENTUAL\",\"accept_limit\":\"2h\"}"))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("at most 3600s");
    }

    @Test
    void aPartitionHistoryIsValidatedAndParsed() {
        NamespaceConfig c = NamespaceConfigParser.parse(
                "p",
                "{\"kind\":\"timeseries\",\"time_partition\":{\"seconds_per_slice\":3600,"
                        + "\"seconds_per_bucket\":600},\"time_partition_history\":[{\"until\":\"2026-11-24T00:00:00Z\","
                        + "\"seconds_per_slice\":86400,\"seconds_per_bucket\":3600,\"buckets_per_id\":4}]}");
        assertThat(c.partitionHistory()).hasSize(1);
        assertThat(NamespaceConfigParser.historyEntry(c.partitionHistory().get(0))
                        .get("until")
                        .asText())
                .isEqualTo("2026-11-24T00:00:00Z");
        assertThatThrownBy(
                        () -> NamespaceConfigParser.parse(
                                "p",
                                "{\"kind\":\"timeseries\",\"time_partition_history\":"
                                        + "[{\"until\":\"2026-11-24T01:00:00Z\",\"seconds_per_slice\":86400,\"seconds_per_bucket\":3600}]}"))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("boundary");
    }

    @Test
    void eventBucketsByTimeIsAPartitionOfItsOwnAndKeptInTheHistory() {
        NamespaceConfig byTime = NamespaceConfigParser.parse(
                "p", "{\"kind\":\"timeseries\",\"time_partition\":{\"event_buckets_by\":\"EVENT_TIME\"}}");
        assertThat(byTime.timePartition().eventBuckets()).isEqualTo(NamespaceConfig.EventBuckets.EVENT_TIME);
        NamespaceConfig byId = NamespaceConfigParser.parse("p", "{\"kind\":\"timeseries\"}");
        assertThat(byId.timePartition().eventBuckets()).isEqualTo(NamespaceConfig.EventBuckets.EVENT_ID);
        // a change of the spread alone is a change of partition (a retried event must find its old partition)
        assertThat(byTime.timePartition()).isNotEqualTo(byId.timePartition());
        var entry = NamespaceConfigParser.historyEntry(
                new NamespaceConfig.EarlierPartition(1_795_737_600_000_000L, byTime.timePartition()));
        assertThat(entry.get("event_buckets_by").asText()).isEqualTo("event_time");
        NamespaceConfig later = NamespaceConfigParser.parse(
                "p", "{\"kind\":\"timeseries\",\"time_partition_history\":[" + entry + "]}");
        assertThat(later.partitionHistory().get(0).partition()).isEqualTo(byTime.timePartition());
        // configs stored before the key existed are written back as they were
        assertThat(NamespaceConfigParser.historyEntry(
                                new NamespaceConfig.EarlierPartition(1_795_737_600_000_000L, byId.timePartition()))
                        .has("event_buckets_by"))
                .isFalse();
    }
}
