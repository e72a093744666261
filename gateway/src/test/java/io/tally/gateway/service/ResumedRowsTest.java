package io.tally.gateway.service;

import static io.tally.gateway.service.EventMergeTest.row;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.gateway.service.ItemRows.ItemRow;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResumedRowsTest {
    /** A stored partition, newest first, and the queries asked of it for the rest. */
    static final class Partition {
        final List<ItemRow> stored;
        final List<Long> restAskedFrom = new ArrayList<>();

        Partition(ItemRow... rows) {
            this.stored = List.of(rows);
        }

        /** What the shared query returns of it: its first rows, at most limit. */
        List<ItemRow> first(int limit) {
            return stored.subList(0, Math.min(limit, stored.size()));
        }

        /** The partition's rows with event_time at most that of the last one given. */
        Iterator<ItemRow> rest(ItemRow last) {
            restAskedFrom.add(last.timeMicros());
            return stored.stream()
                    .filter(r -> r.timeMicros() <= last.timeMicros())
                    .iterator();
        }

        ResumedRows read(int limit) {
            return new ResumedRows(() -> first(limit), limit, this::rest);
        }
    }

    static List<String> keys(Iterator<ItemRow> rows) {
        List<String> out = new ArrayList<>();
        rows.forEachRemaining(r -> out.add(r.timeMicros() + "/" + r.eventId() + "/" + r.itemKey()));
        return out;
    }

    @Test
    void aPartitionWithFewerRowsThanTheLimitNeedsNoOtherQuery() {
        Partition p = new Partition(row(9, "a", "k"), row(5, "b", "k"));
        assertThat(keys(p.read(3))).containsExactly("9/a/k", "5/b/k");
        assertThat(p.restAskedFrom).isEmpty();
    }

    @Test
    void aFullPartitionGoesOnFromItsLastRowsTimeWithoutRepeatingARow() {
        // the limit cuts inside an event (9/e2 has two items) and among events of one time
        Partition p = new Partition(
                row(9, "e1", "a"), row(9, "e2", "a"), row(9, "e2", "b"), row(9, "e3", "a"), row(7, "e1", "a"));
        assertThat(keys(p.read(2))).containsExactly("9/e1/a", "9/e2/a", "9/e2/b", "9/e3/a", "7/e1/a");
        assertThat(p.restAskedFrom).containsExactly(9L);
    }

    @Test
    void aReaderThatStopsInTheFirstRowsNeverAsksForTheRest() {
        Partition p = new Partition(row(9, "a", "k"), row(8, "a", "k"), row(7, "a", "k"));
        ResumedRows rows = p.read(2);
        rows.next();
        rows.next();
        assertThat(p.restAskedFrom).isEmpty();
        assertThat(rows.hasNext()).isTrue();
        assertThat(rows.next().timeMicros()).isEqualTo(7);
        assertThat(rows.hasNext()).isFalse();
        assertThat(p.restAskedFrom).containsExactly(8L);
    }

    @Test
    void anEmptyPartitionIsEmpty() {
        assertThat(keys(new Partition().read(4))).isEmpty();
    }

    @Test
    void mergedWithOtherPartitionsTheEventsComeOutAsFromSeparateQueries() {
        Partition a = new Partition(row(9, "a", "x"), row(6, "a", "x"), row(3, "a", "x"), row(1, "a", "x"));
        Partition b = new Partition(row(8, "b", "x"), row(6, "b", "x"), row(6, "b", "y"));
        var merged = new EventMerge(List.of(a.read(2), b.read(2)));
        var separate = new EventMerge(List.of(a.stored.iterator(), b.stored.iterator()));
        assertThat(EventMergeTest.ids(merged)).isEqualTo(EventMergeTest.ids(separate));
    }
}
