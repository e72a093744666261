package io.tally.model.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class TableIdsTest {
    static final long CREATED = 1_796_005_922_867_000L;

    @Test
    void everyCreatorOfATableGivesItTheSameId() {
        // two jobs, or one job retrying on a second node, build the statement apart: one id
        assertThat(SliceTable.create("ns_playback", "events_20261130", CREATED))
                .isEqualTo(SliceTable.create("ns_playback", "events_20261130", CREATED))
                .endsWith("AND ID = " + TableIds.of("ns_playback", "events_20261130", CREATED));
        assertThat(CounterRollupsTable.create("ns_it_counters", CREATED))
                .endsWith(") WITH ID = " + TableIds.of("ns_it_counters", CounterRollupsTable.TABLE, CREATED));
        assertThat(CounterLogBaseTable.create("ns_it_counters", CREATED))
                .endsWith(") WITH ID = " + TableIds.of("ns_it_counters", CounterLogBaseTable.TABLE, CREATED));
    }

    @Test
    void anotherTableOrANamespaceMadeAgainUnderItsNameGetsAnotherId() {
        UUID id = TableIds.of("ns_playback", "events_20261130", CREATED);
        assertThat(TableIds.of("ns_playback", "events_20261201", CREATED)).isNotEqualTo(id);
        assertThat(TableIds.of("ns_video_views", "events_20261130", CREATED)).isNotEqualTo(id);
        assertThat(TableIds.of("ns_playback", "events_20261130", CREATED + 1)).isNotEqualTo(id);
        // name-based (RFC 4122 version 3): a time-based id of Cassandra's own is never one of ours
        assertThat(id.version()).isEqualTo(3);
    }

    @Test
    void onlyCheckedNamesGoIntoAnId() {
        assertThatThrownBy(() -> TableIds.of("ns_a; DROP KEYSPACE x", "events_1", CREATED))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
