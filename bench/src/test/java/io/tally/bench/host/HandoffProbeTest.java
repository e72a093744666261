package io.tally.bench.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class HandoffProbeTest {
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void everyRoundTripCompletesAndItsCpuIsCountedOnBothThreads() throws InterruptedException {
        // a lost unpark would hang the round; a side whose CPU went uncounted would halve the figure
        HandoffProbe.Round round = HandoffProbe.run(2_000);
        assertThat(round.trips()).isEqualTo(2_000);
        assertThat(round.cpuNanos()).isPositive();
        assertThat(round.wallNanos()).isPositive();
    }

    @Test
    void theFiguresAreAHandoffsCpuAndARoundTripsWallTime() {
        HandoffProbe.Round round = new HandoffProbe.Round(40_000_000L, 30_000_000L, 1_000);
        assertThat(round.cpuMicrosPerHandoff()).isEqualTo(20.0); // 40 ms over 2,000 hand-offs
        assertThat(round.wallMicrosPerRoundTrip()).isEqualTo(30.0);
    }
}
