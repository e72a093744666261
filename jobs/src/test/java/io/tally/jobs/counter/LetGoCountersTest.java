package io.tally.jobs.counter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LetGoCountersTest {
    @Test
    void everyCounterAddedIsNamedAndFewOthersAre() {
        LetGoCounters f = new LetGoCounters();
        assertThat(f.isEmpty()).isTrue();
        assertThat(f.mightContain("video_views/c1")).isFalse();
        int n = 200_000;
        for (int i = 0; i < n; i++) {
            f.add("video_views/counter-" + i);
        }
        for (int i = 0; i < n; i++) {
            assertThat(f.mightContain("video_views/counter-" + i)).isTrue();
        }
        int falseMaybes = 0;
        for (int i = 0; i < n; i++) {
            if (f.mightContain("ad_clicks/counter-" + i)) {
                falseMaybes++;
            }
        }
        // 5 hashes, 2^23 bits, 200,000 keys: about 1 in 50,000; the bound leaves room for chance
        assertThat(falseMaybes).isLessThan(40);
        assertThat(f.fill()).isBetween(0.10, 0.13);
    }

    @Test
    void filtersOfOtherTasksJoinSoNoCounterOfEitherIsForgotten() {
        LetGoCounters a = new LetGoCounters(1 << 16);
        LetGoCounters b = new LetGoCounters(1 << 16);
        a.add("n/a");
        b.add("n/b");
        LetGoCounters joined = new LetGoCounters(1 << 16);
        joined.addAll(a.words());
        joined.addAll(b.words());
        assertThat(joined.mightContain("n/a")).isTrue();
        assertThat(joined.mightContain("n/b")).isTrue();
        a.add("n/c"); // a joined filter is a copy: the first one it took changes alone
        assertThat(joined.mightContain("n/c")).isFalse();
    }

    @Test
    void aFilterOfAnotherSizeIsRefused() {
        LetGoCounters small = new LetGoCounters(1 << 10);
        small.add("n/a");
        assertThatThrownBy(() -> new LetGoCounters().addAll(small.words()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1024 bits");
        assertThatThrownBy(() -> new LetGoCounters(1000)).isInstanceOf(IllegalArgumentException.class);
    }
}
