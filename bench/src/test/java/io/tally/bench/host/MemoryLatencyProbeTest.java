package io.tally.bench.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class MemoryLatencyProbeTest {
    @Test
    void theChaseIsOneCycleThroughEveryIndex() {
        // a shorter cycle would keep the chase in a corner of the array (in cache), reading too fast
        int n = 10_000;
        int[] next = MemoryLatencyProbe.cycle(n, new SplittableRandom(7));
        boolean[] seen = new boolean[n];
        int at = 0;
        for (int step = 0; step < n; step++) {
            assertThat(seen[at])
                    .as("index %d visited twice within %d steps", at, step)
                    .isFalse();
            seen[at] = true;
            at = next[at];
        }
        assertThat(at).isZero();
    }
}
