package io.tally.model.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.model.elasticsearch.IndexNames;
import io.tally.namespace.NamespaceName;
import org.junit.jupiter.api.Test;

class TableStatementsTest {
    @Test
    void identifiersAreCheckedBeforeTheyReachAStatement() {
        assertThatThrownBy(() -> SliceTable.insert("ns_a; DROP KEYSPACE x", "events_20261122"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CounterRollupsTable.select("NS_A")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> NamespaceKeyspace.drop("")).isInstanceOf(IllegalArgumentException.class);
        assertThat(SliceTable.insert("ns_a", "events_20261122")).startsWith("INSERT INTO ns_a.events_20261122 (");
    }

    @Test
    void valuesAreAlwaysBindMarkers() {
        assertThat(SliceTable.selectRange("ns_a", "events_1")).endsWith("event_time >= ? AND event_time <= ?");
        assertThat(SliceTable.selectRangeOfBuckets("ns_a", "events_1"))
                .contains("event_bucket IN ? AND event_time >= ? AND event_time <= ?")
                .endsWith("PER PARTITION LIMIT ?");
        assertThat(CounterRollupsTable.insertRollup("ns_a")).endsWith("VALUES (?, ?, ?) USING TIMESTAMP ?");
        assertThat(SliceCatalogTable.INSERT).endsWith("VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS");
    }

    @Test
    void aSliceTableAndItsIndexShareTheSliceStart() {
        String table = SliceTable.name("20261122");
        assertThat(SliceTable.suffixOf(table)).isEqualTo("20261122");
        assertThat(IndexNames.sliceIndex("playback", SliceTable.suffixOf(table)))
                .isEqualTo("tally-playback-20261122");
        assertThat(IndexNames.pattern("playback")).isEqualTo("tally-playback-*");
        assertThat(NamespaceName.indexAlias("playback")).isEqualTo(IndexNames.alias("playback"));
        assertThatThrownBy(() -> SliceTable.suffixOf("counter_rollups")).isInstanceOf(IllegalArgumentException.class);
    }
}
