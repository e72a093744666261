package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.gateway.service.ItemRows.ItemRow;
import io.tally.gateway.service.TimeSeriesQueries.Event;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class EventMergeTest {
    static ItemRow row(long t, String id, String key) {
        return new ItemRow(t, id, key, key.getBytes());
    }

    /** A partition's rows that counts how many the merge pulled. */
    static final class Counted implements Iterator<ItemRow> {
        final Iterator<ItemRow> rows;
        int pulled;

        Counted(List<ItemRow> rows) {
            this.rows = rows.iterator();
        }

        @Override
        public boolean hasNext() {
            return rows.hasNext();
        }

        @Override
        public ItemRow next() {
            pulled++;
            return rows.next();
        }
    }

    static List<String> ids(Iterator<Event> events) {
        List<String> out = new ArrayList<>();
        events.forEachRemaining(e -> out.add(e.timeMicros() + "/" + e.eventId()));
        return out;
    }

    @Test
    void partitionsMergeNewestFirstAndIdsAscendAtOneTime() {
        var a = List.of(row(9, "b", "k"), row(5, "a", "k"), row(1, "z", "k"));
        var b = List.of(row(9, "a", "k"), row(7, "q", "k"), row(5, "b", "k"));
        var c = List.<ItemRow>of();
        assertThat(ids(new EventMerge(List.of(a.iterator(), b.iterator(), c.iterator()))))
                .containsExactly("9/a", "9/b", "7/q", "5/a", "5/b", "1/z");
    }

    @Test
    void anEventsRowsBecomeItsItemsAndTheEmptyKeyMarksAnEventWithout() {
        var rows = List.of(row(9, "e1", "a"), row(9, "e1", "b"), row(9, "e2", ""), row(8, "e1", "c"));
        List<Event> events = new ArrayList<>();
        new EventMerge(List.of(rows.iterator())).forEachRemaining(events::add);
        assertThat(events).hasSize(3);
        assertThat(events.get(0).items()).extracting(Map.Entry::getKey).containsExactly("a", "b");
        assertThat(events.get(1).items()).isEmpty();
        assertThat(events.get(2).items()).extracting(Map.Entry::getKey).containsExactly("c");
    }

    @Test
    void takingAFewEventsReadsOnlyAFewRowsOfEachPartition() {
        List<ItemRow> many = new ArrayList<>();
        List<ItemRow> others = new ArrayList<>();
        for (int i = 10_000; i > 0; i--) {
            many.add(row(2L * i, "m" + i, "k"));
            others.add(row(2L * i + 1, "o" + i, "k"));
        }
        Counted p1 = new Counted(many);
        Counted p2 = new Counted(others);
        EventMerge merge = new EventMerge(List.of(p1, p2));
        for (int i = 0; i < 100; i++) {
            merge.next();
        }
        assertThat(p1.pulled + p2.pulled).isLessThanOrEqualTo(104);
    }

    @Test
    void fetchSizesFollowThePageAndStayBounded() {
        assertThat(RowsPerEvent.filteredRowsPerFetch(100, 4)).isEqualTo(82);
        assertThat(RowsPerEvent.filteredRowsPerFetch(1, 4)).isEqualTo(64);
        assertThat(RowsPerEvent.filteredRowsPerFetch(1_000_000, 1)).isEqualTo(5_000);
    }

    @Test
    void unfilteredFetchesAskForAPagesShareOfRowsWithAMargin() {
        // 101 events over 4 event buckets, an item an event: 25.25 expected, 5% more, 1.5 sd (6.5), 1 and 2
        assertThat(RowsPerEvent.rowsPerFetch(100, 4, 1.0)).isEqualTo(37);
        // events of two items: twice the rows, and twice their spread
        assertThat(RowsPerEvent.rowsPerFetch(100, 4, 2.0)).isEqualTo(71);
        // one bucket holds every event of the page: no spread, the margin for bigger events only
        assertThat(RowsPerEvent.rowsPerFetch(100, 1, 1.0)).isEqualTo(110);
        assertThat(RowsPerEvent.rowsPerFetch(0, 4, 0.5)).isEqualTo(5);
        assertThat(RowsPerEvent.rowsPerFetch(1_000_000, 1, 1.0)).isEqualTo(5_000);
    }

    @Test
    void aPageOfEventsHashedOverItsBucketsRarelyNeedsASecondQuery() {
        // the page's 101 newest events fall into 4 buckets at random; a bucket asked for fewer
        // rows than its events took is queried again
        Random random = new Random(27);
        int pages = 20_000;
        int secondQueries = 0;
        for (int rowsPerEvent = 1; rowsPerEvent <= 3; rowsPerEvent++) {
            int fetch = RowsPerEvent.rowsPerFetch(100, 4, rowsPerEvent);
            for (int page = 0; page < pages; page++) {
                int[] rows = new int[4];
                for (int e = 0; e < 101; e++) {
                    rows[random.nextInt(4)] += rowsPerEvent;
                }
                if (Arrays.stream(rows).anyMatch(r -> r > fetch)) {
                    secondQueries++;
                }
            }
            // and the four first fetches ask for less than 50% more rows than the page takes
            assertThat(4.0 * fetch / (101 * rowsPerEvent)).isLessThan(1.5);
        }
        assertThat((double) secondQueries / (3 * pages)).isBetween(0.001, 0.1);
    }

    @Test
    void partitionsReadInOrderAreAskedForThePageAndOneMoreEvent() {
        // event buckets by time: one partition at a time, no share of several to spread over
        assertThat(RowsPerEvent.rowsInOrder(100, 1.0)).isEqualTo(111); // 101 events, 5% and 4 more
        assertThat(RowsPerEvent.rowsInOrder(100, 2.0)).isEqualTo(217);
        assertThat(RowsPerEvent.rowsInOrder(1_000_000, 1.0)).isEqualTo(5_000);
    }

    @Test
    void concatenatedPartitionsAreOpenedOnlyWhenTheOnesBeforeThemAreUsedUp() {
        List<String> opened = new ArrayList<>();
        List<java.util.function.Supplier<Iterator<ItemRow>>> parts = List.of(
                () -> {
                    opened.add("newest");
                    return List.of(row(30, "c", "k"), row(20, "b", "k"), row(15, "b2", "k"))
                            .iterator();
                },
                () -> {
                    opened.add("empty");
                    return java.util.Collections.emptyIterator();
                },
                () -> {
                    opened.add("oldest");
                    return List.of(row(10, "a", "k")).iterator();
                });
        EventMerge merged = new EventMerge(List.of(new TimeSeriesQueries.ConcatenatedRows(parts)));
        assertThat(merged.next().eventId()).isEqualTo("c");
        assertThat(opened).containsExactly("newest");
        assertThat(merged.next().eventId()).isEqualTo("b");
        // an event's items are grouped by looking one row past it: the last one's look opens the next
        assertThat(merged.next().eventId()).isEqualTo("b2");
        assertThat(merged.next().eventId()).isEqualTo("a");
        assertThat(opened).containsExactly("newest", "empty", "oldest");
        assertThat(merged.hasNext()).isFalse();
    }

    @Test
    void theRowsAnEventTakesFollowThePagesRead() {
        RowsPerEvent r = new RowsPerEvent();
        assertThat(r.estimate()).isEqualTo(1.0);
        for (int i = 0; i < 40; i++) {
            r.observe(100, 300); // events of three items
        }
        assertThat(r.estimate()).isBetween(2.95, 3.0);
        r.observe(0, 0); // an empty page says nothing
        assertThat(r.estimate()).isBetween(2.95, 3.0);
        r.observe(100, 100);
        assertThat(r.estimate()).isBetween(2.7, 2.8); // one page moves it an eighth of the way
    }
}
