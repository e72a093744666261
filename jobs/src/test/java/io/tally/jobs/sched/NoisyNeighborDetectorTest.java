package io.tally.jobs.sched;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The detector on Flink's operator harness: FIRING, RESOLVED, and a container that goes away while FIRING. */
class NoisyNeighborDetectorTest {
    static final long T0 = 1_795_000_000_000L;
    static final long SIZE = 10_000, SLIDE = 2_000, FORGET = 60_000;
    KeyedOneInputStreamOperatorTestHarness<String, ContainerWindow, AlertRecord> h;

    @BeforeEach
    void open() throws Exception {
        open(AlertHoldDown.NONE);
    }

    void open(AlertHoldDown holdDown) throws Exception {
        if (h != null) {
            h.close();
        }
        h = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new NoisyNeighborDetector(
                        NoisyNeighborRule.defaults(), Duration.ofMillis(SIZE), holdDown, Duration.ofMillis(FORGET))),
                ContainerWindow::key,
                Types.STRING);
        h.open();
    }

    /** Quiet windows 0..10: the baseline (those from the first one's end on are learnt: five). */
    void baseline() throws Exception {
        for (int n = 0; n <= 10; n++) {
            feed(window(n, false));
        }
    }

    List<String> states() {
        return alerts().stream().map(a -> a.state).toList();
    }

    @Test
    void aVerdictMustHoldForItsHoldDownBeforeTheAlertChanges() throws Exception {
        open(new AlertHoldDown(Duration.ofMillis(2 * SLIDE), Duration.ofMillis(3 * SLIDE)));
        baseline();
        feed(window(11, true));
        feed(window(12, false)); // a burst: one noisy window, then quiet
        feed(window(13, true));
        feed(window(14, true));
        assertThat(states()).isEmpty(); // noisy since window 13, for one slide
        feed(window(15, true));
        assertThat(states()).containsExactly("FIRING"); // two slides
        assertThat(alerts().get(0).window.windowEndMillis).isEqualTo(window(15, true).windowEndMillis);
        feed(window(16, false));
        feed(window(17, false));
        feed(window(18, true)); // the neighbor is back before three slides of calm: still FIRING
        feed(window(19, false));
        feed(window(20, false));
        feed(window(21, false));
        assertThat(states()).containsExactly("FIRING");
        feed(window(22, false));
        assertThat(states()).containsExactly("FIRING", "RESOLVED");
    }

    @AfterEach
    void close() throws Exception {
        h.close();
    }

    /** The n-th window: quiet, or with a neighbor (p99 and switch-outs by other containers up tenfold). */
    static ContainerWindow window(int n, boolean noisy) {
        ContainerWindow w = NoisyNeighborRuleTest.window(noisy ? 5_000 : 500, 10, noisy ? 500 : 50, 2);
        w.windowStartMillis = T0 + n * SLIDE;
        w.windowEndMillis = w.windowStartMillis + SIZE;
        return w;
    }

    void feed(ContainerWindow w) throws Exception {
        h.processElement(w, w.windowEndMillis - 1);
        h.processWatermark(w.windowEndMillis - 1);
    }

    List<AlertRecord> alerts() {
        return h.extractOutputValues();
    }

    /** Quiet windows 0..10 (those from the first one's end on are learnt: five), noisy window 11. */
    void fire() throws Exception {
        for (int n = 0; n <= 10; n++) {
            feed(window(n, false));
        }
        feed(window(11, true));
        assertThat(alerts()).extracting(a -> a.state).containsExactly("FIRING");
    }

    @Test
    void firesAndResolvesFromItsWindows() throws Exception {
        fire();
        feed(window(12, false));
        assertThat(alerts()).extracting(a -> a.state).containsExactly("FIRING", "RESOLVED");
        assertThat(alerts().get(1).reason).startsWith("back to normal");
    }

    @Test
    void aContainerThatGoesAwayWhileFiringIsResolvedAfterAWindowOfSilence() throws Exception {
        fire();
        long lastEnd = window(11, true).windowEndMillis;
        h.processWatermark(lastEnd + SIZE - 1);
        assertThat(alerts()).hasSize(1); // not yet: a window's size of silence
        h.processWatermark(lastEnd + SIZE);
        assertThat(alerts()).extracting(a -> a.state).containsExactly("FIRING", "RESOLVED");
        AlertRecord resolved = alerts().get(1);
        assertThat(resolved.reason).startsWith("gone:");
        assertThat(resolved.window.windowEndMillis).isEqualTo(lastEnd + SIZE);
        assertThat(resolved.window.container).isEqualTo("c");
    }

    @Test
    void aContainerStillFiringIsNotResolvedByAnOlderTimer() throws Exception {
        fire();
        for (int n = 12; n < 20; n++) { // noisy on: windows every slide, each past the first timer
            feed(window(n, true));
        }
        assertThat(alerts()).extracting(a -> a.state).containsExactly("FIRING");
    }

    @Test
    void aContainerGoneForForgetAfterIsForgottenAndLearnsAgain() throws Exception {
        baseline();
        long lastEnd = window(10, false).windowEndMillis;
        assertThat(h.numEventTimeTimers()).isEqualTo(1); // one forget timer, not one per window
        h.processWatermark(lastEnd + FORGET);
        assertThat(h.numKeyedStateEntries()).isZero();
        assertThat(h.numEventTimeTimers()).isZero();
        // back later: a new baseline first, so its first noisy window is not judged
        int back = (int) ((lastEnd + FORGET - T0) / SLIDE) + 1;
        feed(window(back, true));
        assertThat(alerts()).isEmpty();
    }

    @Test
    void aFiringContainerGoneIsResolvedThenForgotten() throws Exception {
        fire();
        long lastEnd = window(11, true).windowEndMillis;
        h.processWatermark(lastEnd + FORGET);
        assertThat(states()).containsExactly("FIRING", "RESOLVED");
        assertThat(h.numKeyedStateEntries()).isZero();
    }
}
