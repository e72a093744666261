package io.tally.jobs.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReplicaBatchesTest {
    final List<String> sent = new ArrayList<>();

    ReplicaBatches<String> batches(int partitions, long bytes) {
        return new ReplicaBatches<>(partitions, bytes, (rows, n) -> sent.add(n + ":" + String.join(",", rows)));
    }

    @Test
    void partitionsOfOneReplicaSetShareABatchAndReplicaSetsNeverMix() throws Exception {
        var b = batches(10, 5120);
        b.add("nodeA", List.of("a1"), 100);
        b.add("nodeB", List.of("b1"), 100);
        b.add("nodeA", List.of("a2", "a3"), 100); // one partition, two rows (an event's items)
        assertThat(sent).isEmpty();
        b.flush();
        assertThat(sent).containsExactlyInAnyOrder("2:a1,a2,a3", "1:b1");
    }

    @Test
    void aBatchIsHandedOutBeforeItPassesItsPartitionOrByteBound() throws Exception {
        var b = batches(2, 250);
        b.add("n", List.of("p1"), 100);
        b.add("n", List.of("p2"), 100);
        b.add("n", List.of("p3"), 100); // a third partition: the first two go
        assertThat(sent).containsExactly("2:p1,p2");
        b.add("n", List.of("p4"), 200); // 100 + 200 > 250: p3 goes alone
        assertThat(sent).containsExactly("2:p1,p2", "1:p3");
        b.flush();
        assertThat(sent).containsExactly("2:p1,p2", "1:p3", "1:p4");
    }

    @Test
    void aLargeGroupOrAnUnknownReplicaSetGoesAloneAtOnce() throws Exception {
        var b = batches(10, 250);
        b.add("n", List.of("small"), 10);
        b.add("n", List.of("big1", "big2"), 250);
        b.add(null, List.of("unknown"), 10);
        assertThat(sent).containsExactly("1:big1,big2", "1:unknown");
        b.flush();
        assertThat(sent).containsExactly("1:big1,big2", "1:unknown", "1:small");
    }
}
