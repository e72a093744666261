package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.common.KafkaClientSecurity;
import org.junit.jupiter.api.Test;

class CounterViewTest {
    static CounterView view(int maxCounters) {
        return new CounterView(KafkaClientSecurity.PLAINTEXT.client("127.0.0.1:1"), null, maxCounters, name -> 0);
    }

    static CounterView.Rollup rollup(long count) {
        return new CounterView.Rollup(count, count, count, false);
    }

    @Test
    void pastItsBoundTheViewDropsTheCountersThatCameLongestAgo() throws Exception {
        try (CounterView view = view(1_000)) {
            for (int i = 0; i < 5_000; i++) {
                view.applied("video_views", "c" + i, rollup(i));
            }
            assertThat(view.size()).isEqualTo(1_000);
            assertThat(view.get("video_views", "c3999")).isEmpty();
            assertThat(view.get("video_views", "c4000")).contains(rollup(4_000));
            assertThat(view.get("video_views", "c4999")).contains(rollup(4_999));
        }
    }

    @Test
    void aNewerRollupOfAHeldCounterReplacesItWithoutDroppingAnother() throws Exception {
        try (CounterView view = view(3)) {
            view.applied("video_views", "a", rollup(1));
            view.applied("video_views", "b", rollup(1));
            view.applied("video_views", "c", rollup(1));
            view.applied("video_views", "a", rollup(2));
            view.applied("video_views", "a", rollup(0)); // an older rollup arriving late changes nothing
            assertThat(view.size()).isEqualTo(3);
            assertThat(view.get("video_views", "a")).contains(rollup(2));
            view.remember("video_views", "d", rollup(0)); // read from Cassandra: it counts as arrived
            assertThat(view.get("video_views", "a")).isEmpty();
            assertThat(view.get("video_views", "d")).contains(rollup(0));
        }
    }

    /**
     * A full view keeps taking counters in: dropping the hash map's first key each time walked an
     * ever longer run of emptied bins (this took minutes; it takes well under a second now).
     */
    @Test
    void aFullViewTakesHundredsOfThousandsOfNewCounters() throws Exception {
        try (CounterView view = view(100_000)) {
            for (int i = 0; i < 400_000; i++) {
                view.applied("video_views", "c" + i, rollup(i));
            }
            assertThat(view.size()).isEqualTo(100_000);
            assertThat(view.get("video_views", "c399999")).isPresent();
        }
    }
}
