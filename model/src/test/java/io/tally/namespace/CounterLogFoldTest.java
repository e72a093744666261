package io.tally.namespace;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CounterLogFoldTest {
    record Row(String counter, CounterFold.Mutation m) {}

    @Test
    void aScanInAnyOrderFoldsAsTheEventTimeOrderDoes() {
        Random random = new Random(42);
        for (int round = 0; round < 200; round++) {
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                String counter = "c" + random.nextInt(4);
                long t = random.nextInt(50);
                boolean clear = random.nextInt(15) == 0;
                rows.add(new Row(counter, new CounterFold.Mutation(t, clear, clear ? 0 : random.nextInt(21) - 10)));
            }
            Collections.shuffle(rows, random);
            CounterLogFold fold = new CounterLogFold();
            rows.forEach(r -> fold.first(r.counter(), r.m()));
            if (fold.needsSecondPass()) {
                rows.forEach(r -> fold.second(r.counter(), r.m()));
            }
            for (String c : List.of("c0", "c1", "c2", "c3")) {
                long base = random.nextInt(100);
                List<CounterFold.Mutation> mine = rows.stream()
                        .filter(r -> r.counter().equals(c))
                        .map(Row::m)
                        .toList();
                assertThat(fold.foldOnto(c, base)).as("round %d, %s", round, c).isEqualTo(CounterFold.fold(base, mine));
            }
        }
    }

    @Test
    void aClearDropsTheBaseAndEveryAddAtOrBeforeIt() {
        CounterLogFold fold = new CounterLogFold();
        List<CounterFold.Mutation> ms = List.of(
                new CounterFold.Mutation(10, false, 5),
                new CounterFold.Mutation(20, true, 0),
                new CounterFold.Mutation(20, false, 7), // at the CLEAR's instant: cleared
                new CounterFold.Mutation(30, false, 2));
        ms.forEach(m -> fold.first("c", m));
        assertThat(fold.needsSecondPass()).isTrue();
        ms.forEach(m -> fold.second("c", m));
        assertThat(fold.foldOnto("c", 100)).isEqualTo(2);
        assertThat(fold.foldOnto("unseen", 100)).isEqualTo(100);
    }
}
