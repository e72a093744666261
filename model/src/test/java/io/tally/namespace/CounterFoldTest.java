package io.tally.namespace;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.namespace.CounterFold.Mutation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CounterFoldTest {
    @Test
    void addsFromTheStartingCount() {
        assertThat(CounterFold.fold(10, List.of(new Mutation(1, false, 5), new Mutation(2, false, -3))))
                .isEqualTo(12);
    }

    @Test
    void clearDropsEverythingAtOrBeforeItsTime() {
        List<Mutation> ms = List.of(
                new Mutation(1, false, 5),
                new Mutation(3, false, 7),
                new Mutation(3, true, 0),
                new Mutation(4, false, 2));
        assertThat(CounterFold.fold(100, ms)).isEqualTo(2);
    }

    @Test
    void theResultDoesNotDependOnArrivalOrder() {
        List<Mutation> ms = new ArrayList<>();
        Random r = new Random(1);
        for (int i = 0; i < 200; i++) {
            ms.add(new Mutation(r.nextInt(50), r.nextInt(20) == 0, r.nextInt(10)));
        }
        long expected = CounterFold.fold(0, ms);
        for (int i = 0; i < 20; i++) {
            Collections.shuffle(ms, r);
            assertThat(CounterFold.fold(0, ms)).isEqualTo(expected);
        }
    }

    @Test
    void storedItemsRoundTrip() {
        assertThat(CounterFold.fromItem(9, CounterFold.ADD, CounterFold.itemValue(-42)))
                .isEqualTo(new Mutation(9, false, -42));
        assertThat(CounterFold.fromItem(9, CounterFold.CLEAR, CounterFold.itemValue(0)))
                .isEqualTo(new Mutation(9, true, 0));
        assertThat(CounterFold.fromItem(9, "deviceType", "tv".getBytes())).isNull();
        assertThat(CounterFold.fromItem(9, CounterFold.ADD, "x".getBytes())).isNull();
    }

    @org.junit.jupiter.api.Test
    void countsSaturateAtTheirBoundsInsteadOfWrapping() {
        org.assertj.core.api.Assertions.assertThat(CounterFold.add(Long.MAX_VALUE, Long.MAX_VALUE))
                .isEqualTo(Long.MAX_VALUE);
        org.assertj.core.api.Assertions.assertThat(CounterFold.add(Long.MIN_VALUE, -1))
                .isEqualTo(Long.MIN_VALUE);
        org.assertj.core.api.Assertions.assertThat(CounterFold.add(Long.MAX_VALUE, Long.MIN_VALUE))
                .isEqualTo(-1);
        org.assertj.core.api.Assertions.assertThat(CounterFold.fold(
                        0,
                        java.util.List.of(
                                new CounterFold.Mutation(1, false, Long.MAX_VALUE),
                                new CounterFold.Mutation(2, false, Long.MAX_VALUE))))
                .isEqualTo(Long.MAX_VALUE);
    }
}
