package io.tally.namespace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class NamespaceConfigParserTest {
    @Test
    void parsesTheDesignExamples() throws Exception {
        NamespaceCatalog catalog = NamespaceCatalog.fromDirectory(Path.of("../infra/namespaces"));
        NamespaceConfig playback = catalog.get("playback").orElseThrow();
        assertThat(playback.kind()).isEqualTo(NamespaceConfig.Kind.TIMESERIES);
        assertThat(playback.acceptLimit()).isEqualTo(Duration.ofSeconds(5));
        assertThat(playback.timePartition().bucketsPerId()).isEqualTo(4);
        assertThat(playback.index().fieldMapping()).containsEntry("deviceType", NamespaceConfig.FieldType.KEYWORD);
        assertThat(catalog.get("ad_clicks").orElseThrow().counterType())
                .isEqualTo(NamespaceConfig.CounterType.ACCURATE);
        assertThat(catalog.get("sched.runq")).isPresent();
        assertThat(catalog.get("sched.switchout")).isPresent();
        assertThat(catalog.get("sched.alerts")).isPresent();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "{\"kind\":\"timeseries\",\"colour\":\"red\"}|colour",
                "{\"kind\":\"gauge\"}|kind",
                "{\"kind\":\"counter\"}|counter_type",
                "{\"kind\":\"counter\",\"counter_type\":\"SOMETIMES\"}|counter_type",
                "{\"kind\":\"timeseries\",\"counter_type\":\"EVENTUAL\"}|counter_type",
                "{\"kind\":\"timeseries\",\"accept_limit\":\"soon\"}|accept_limit",
                "{\"kind\":\"timeseries\",\"accept_limit\":\"0s\"}|accept_limit",
                "{\"kind\":\"timeseries\",\"time_partition\":{\"seconds_per_slice\":86400,\"seconds_per_bucket\":7000}}|time_partition.seconds_per_bucket",
                "{\"kind\":\"timeseries\",\"time_partition\":{\"seconds_per_slice\":\"big\"}}|time_partition.seconds_per_slice",
                "{\"kind\":\"timeseries\",\"time_partition\":{\"buckets_per_id\":0}}|time_partition.buckets_per_id",
                "{\"kind\":\"timeseries\",\"time_partition\":{\"event_buckets_by\":\"random\"}}|time_partition.event_buckets_by",
                "{\"kind\":\"counter\",\"counter_type\":\"EVENTUAL\",\"time_partition\":{\"event_buckets_by\":\"event_time\"}}|time_partition.event_buckets_by",
                "{\"kind\":\"timeseries\",\"time_partition\":{\"event_buckets_by\":4}}|time_partition.event_buckets_by",
                "{\"kind\":\"timeseries\",\"retention\":{\"close_after\":\"10s\",\"delete_after\":\"5s\"}}|retention.delete_after",
                "{\"kind\":\"timeseries\",\"index\":{\"field_mapping\":{\"a-b\":\"KEYWORD\"}}}|index.field_mapping.a-b",
                "{\"kind\":\"timeseries\",\"index\":{\"field_mapping\":{\"ok\":\"BLOB\"}}}|index.field_mapping.ok",
                "{\"kind\":\"timeseries\",\"index\":{\"field_mapping\":{\"event_id\":\"KEYWORD\"}}}|index.field_mapping.event_id",
                "{\"kind\":\"timeseries\",\"index\":{\"enabled\":\"yes\"}}|index.enabled",
                "{\"kind\":\"timeseries\",\"retention\":{\"close_after\":\"106752d\",\"delete_after\":\"106752d\"}}|retention.close_after",
                "{\"kind\":\"timeseries\",\"retention\":{\"close_after\":\"1d\",\"delete_after\":\"999999999999d\"}}|retention.delete_after",
                "{\"kind\":\"timeseries\",\"accept_limit\":\"999999999999h\"}|accept_limit",
                "{\"kind\":\"timeseries\",\"index\":{\"refresh_interval\":\"2h\"}}|index.refresh_interval",
                "[1,2]|config"
            })
    void everyErrorNamesItsField(String json, String field) {
        assertThatThrownBy(() -> NamespaceConfigParser.parse("ns", json))
                .isInstanceOfSatisfying(
                        InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo(field));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "Upper",
                "1abc",
                "a-b",
                "a b",
                "ns;drop",
                "a..b",
                "trailing.",
                "a/b",
                "abcdefghijabcdefghijabcdefghijabcdefghijX"
            })
    void unsafeNamesAreRejected(String name) {
        assertThat(NamespaceName.isSafe(name)).isFalse();
        assertThatThrownBy(() -> NamespaceConfigParser.parse(name, "{\"kind\":\"timeseries\"}"))
                .isInstanceOfSatisfying(
                        InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo("name"));
    }

    @Test
    void namesMapToKeyspacesAndIndexes() {
        assertThat(NamespaceName.keyspace("sched.runq")).isEqualTo("ns_sched_runq");
        assertThat(NamespaceName.indexAlias("sched.runq")).isEqualTo("tally-sched.runq");
        assertThat(NamespaceName.keyspace("a".repeat(40))).hasSizeLessThanOrEqualTo(48);
    }

    @Test
    void durationsInTheArticlesFormat() {
        assertThat(Durations.parse("518400s", "x")).isEqualTo(Duration.ofDays(6));
        assertThat(Durations.parse("250ms", "x")).isEqualTo(Duration.ofMillis(250));
        assertThatThrownBy(() -> Durations.parse("5 seconds", "x")).hasMessageContaining("not a duration");
    }
}
