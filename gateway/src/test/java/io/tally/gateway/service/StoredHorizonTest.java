package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.model.AcceptWindow;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfigParser;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class StoredHorizonTest {
    static final NamespaceConfig FIVE_SECONDS =
            NamespaceConfigParser.parse("playback", "{\"kind\":\"timeseries\",\"accept_limit\":\"5s\"}");
    static final long STORED_BEFORE_MS = 1_800_000_000_000L;

    @Test
    void theLineIsTheWritersProgressLessTheSkewTheWindowAndTheGrace() {
        assertThat(StoredHorizon.finalBefore(STORED_BEFORE_MS, 2_000, 5_000_000))
                .isEqualTo((STORED_BEFORE_MS - 2_000) * 1000 - 5_000_000 - AcceptWindow.STORE_GRACE_MICROS);
        assertThat(StoredHorizon.finalBefore(Long.MIN_VALUE, 2_000, 5_000_000)).isEqualTo(Long.MIN_VALUE);
        assertThat(StoredHorizon.NONE.finalBeforeMicros(FIVE_SECONDS)).isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void theWriterIsAskedAtMostOnceARefreshAndItsProgressNeverGoesBack() throws Exception {
        AtomicLong nanos = new AtomicLong();
        AtomicInteger asked = new AtomicInteger();
        AtomicLong answer = new AtomicLong(STORED_BEFORE_MS);
        // The first answer waits until the test has seen that none is in yet: the probe runs on a
        // thread of its own, which could otherwise answer before that first look.
        CountDownLatch firstLook = new CountDownLatch(1);
        StoredHorizon.Probe probe = () -> {
            asked.incrementAndGet();
            firstLook.await();
            return answer.get();
        };
        try (StoredHorizon horizon = new StoredHorizon(probe, 1_000, 0, nanos::get)) {
            long expected = StoredHorizon.finalBefore(STORED_BEFORE_MS, 0, 5_000_000);
            assertThat(horizon.finalBeforeMicros(FIVE_SECONDS)).isEqualTo(Long.MIN_VALUE); // asked, not answered yet
            firstLook.countDown();
            waitFor(() -> horizon.finalBeforeMicros(FIVE_SECONDS) == expected);
            assertThat(asked.get()).isEqualTo(1); // within the refresh period: not asked again

            answer.set(STORED_BEFORE_MS - 60_000); // a job restored from an older checkpoint
            nanos.addAndGet(1_000_000_001L);
            horizon.finalBeforeMicros(FIVE_SECONDS);
            waitFor(() -> asked.get() == 2);
            Thread.sleep(50);
            assertThat(horizon.finalBeforeMicros(FIVE_SECONDS)).isEqualTo(expected);

            answer.set(Long.MIN_VALUE); // the group's offsets gone: what was final stays final
            nanos.addAndGet(1_000_000_001L);
            horizon.finalBeforeMicros(FIVE_SECONDS);
            waitFor(() -> asked.get() == 3);
            Thread.sleep(50);
            assertThat(horizon.finalBeforeMicros(FIVE_SECONDS)).isEqualTo(expected);
        }
    }

    @Test
    void aFailingProbeLeavesNothingFinal() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        StoredHorizon.Probe probe = () -> {
            asked.incrementAndGet();
            throw new IllegalStateException("Kafka is down");
        };
        try (StoredHorizon horizon = new StoredHorizon(probe, 0, 0, System::nanoTime)) {
            horizon.finalBeforeMicros(FIVE_SECONDS);
            waitFor(() -> asked.get() >= 1);
            Thread.sleep(20);
            assertThat(horizon.finalBeforeMicros(FIVE_SECONDS)).isEqualTo(Long.MIN_VALUE);
        }
    }

    static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited 5 s").isLessThan(deadline);
            Thread.sleep(5);
        }
    }
}
