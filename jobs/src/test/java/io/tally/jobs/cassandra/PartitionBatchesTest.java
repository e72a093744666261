package io.tally.jobs.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PartitionBatchesTest {
    final List<PartitionBatches.Batch<String>> sent = new ArrayList<>();

    List<String> sentAs() {
        return sent.stream()
                .map(b -> b.partition() + ":" + String.join(",", b.rows()))
                .toList();
    }

    @Test
    void rowsOfOnePartitionGoTogetherAndPartitionsNeverMix() throws Exception {
        var batches = new PartitionBatches<String>(100, 1 << 20, sent::add);
        batches.add("p1", "e1", "a", 10);
        batches.add("p2", "e2", "b", 10);
        batches.add("p1", "e3", "c", 10);
        assertThat(sent).isEmpty(); // nothing is sent before a bound or a flush
        assertThat(batches.waiting()).isEqualTo(3);
        batches.flush();
        assertThat(sentAs()).containsExactly("p1:a,c", "p2:b");
        assertThat(batches.waiting()).isZero();
    }

    @Test
    void aFullBatchGoesBeforeTheNextEventButNeverSplitsAnEvent() throws Exception {
        var batches = new PartitionBatches<String>(2, 1 << 20, sent::add);
        batches.add("p", "e1", "e1.a", 10);
        batches.add("p", "e1", "e1.b", 10);
        batches.add("p", "e1", "e1.c", 10); // the same event: stays with its items past the bound
        assertThat(sent).isEmpty();
        batches.add("p", "e2", "e2.a", 10);
        assertThat(sentAs()).containsExactly("p:e1.a,e1.b,e1.c");
        batches.flush();
        assertThat(sentAs()).containsExactly("p:e1.a,e1.b,e1.c", "p:e2.a");
    }

    @Test
    void bytesBoundABatchToo() throws Exception {
        var batches = new PartitionBatches<String>(100, 100, sent::add);
        batches.add("p", "e1", "a", 60);
        batches.add("p", "e2", "b", 60); // 120 bytes would pass 100: a goes first
        batches.flush();
        assertThat(sent).extracting(PartitionBatches.Batch::bytes).containsExactly(60L, 60L);
    }
}
