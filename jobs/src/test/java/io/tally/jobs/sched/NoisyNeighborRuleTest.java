package io.tally.jobs.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.sched.NoisyNeighborRule.Baseline;
import io.tally.jobs.sched.NoisyNeighborRule.Verdict;
import org.junit.jupiter.api.Test;

class NoisyNeighborRuleTest {
    final NoisyNeighborRule rule = NoisyNeighborRule.defaults();

    static ContainerWindow window(long p99, long same, long other, long system) {
        ContainerWindow w = new ContainerWindow();
        w.host = "h";
        w.container = "c";
        w.samples = 100;
        w.meanUs = p99 / 8;
        w.p50Us = p99 / 4;
        w.p90Us = p99 / 2;
        w.p99Us = p99;
        w.sameContainer = same;
        w.otherContainer = other;
        w.system = system;
        return w;
    }

    Baseline quiet() {
        return learnt(rule, window(500, 10, 5, 2));
    }

    /** The baseline of five windows like `quiet`. */
    static Baseline learnt(NoisyNeighborRule r, ContainerWindow quiet) {
        Baseline b = null;
        for (int i = 0; i < 5; i++) {
            b = r.learn(b, quiet);
        }
        return b;
    }

    @Test
    void latencyAndPreemptionsByOthersRisingTogetherIsANoisyNeighbor() {
        assertThat(rule.judge(window(8_000, 10, 300, 20), quiet())).isEqualTo(Verdict.NOISY_NEIGHBOR);
        assertThat(rule.judge(window(8_000, 10, 0, 300), quiet()))
                .isEqualTo(Verdict.NOISY_NEIGHBOR); // a system service
    }

    @Test
    void latencyRisingWithItsOwnTasksPreemptingIsThrottlingNotANeighbor() {
        assertThat(rule.judge(window(8_000, 400, 10, 5), quiet())).isEqualTo(Verdict.SELF_THROTTLED);
        assertThat(rule.judge(window(8_000, 0, 0, 0), quiet()))
                .isEqualTo(Verdict.SELF_THROTTLED); // quota: no preemptions at all
    }

    @Test
    void onlyOneSignalOrNoBaselineIsNormal() {
        assertThat(rule.judge(window(600, 10, 300, 20), quiet())).isEqualTo(Verdict.NORMAL); // preemptions alone
        assertThat(rule.judge(window(8_000, 10, 300, 20), null)).isEqualTo(Verdict.NORMAL); // nothing learnt yet
        Baseline low = learnt(rule, window(100, 1, 1, 1));
        assertThat(rule.judge(window(900, 10, 300, 20), low))
                .as("below the absolute floor")
                .isEqualTo(Verdict.NORMAL);
        assertThat(rule.judge(window(8_000, 10, 300, 20), rule.learn(null, window(500, 10, 5, 2))))
                .as("one window is not a baseline yet")
                .isEqualTo(Verdict.NORMAL);
    }

    @Test
    void aNeighborContainerStandsOutAgainstABusyHostsSystemPreemptions() {
        // A loaded host: system services already preempt the victim 130 times a window and its
        // p99 is noisy; a neighbor container then adds 150 switch-outs of its own.
        Baseline busy = learnt(rule, window(10_000, 0, 0, 130));
        assertThat(rule.judge(window(30_000, 0, 120, 130), busy)).isEqualTo(Verdict.NOISY_NEIGHBOR);
        assertThat(rule.judge(window(30_000, 0, 0, 140), busy))
                .as("the same background, no neighbor")
                .isNotEqualTo(Verdict.NOISY_NEIGHBOR);
    }

    @Test
    void aBusyHostsSystemJitterAloneIsNotANeighbor() {
        // the CI case: system preemptions tripled and the p90 doubled, the p99 did not
        Baseline b = learnt(rule, window(11_500, 0, 0, 55));
        ContainerWindow w = window(17_151, 0, 0, 187);
        w.p90Us = 17_000;
        assertThat(rule.judge(w, b)).isEqualTo(Verdict.NORMAL);
    }

    @Test
    void aNeighborContainerOnAHostWithALongTailIsSeenByItsP90() {
        // the CI case: the lone victim's p99 already long; the neighbor's loops moved p50 and p90
        ContainerWindow quiet = window(45_000, 0, 0, 60);
        quiet.p90Us = 2_000;
        Baseline b = learnt(rule, quiet);
        ContainerWindow w = window(80_383, 0, 271, 21);
        w.p90Us = 14_655;
        assertThat(rule.judge(w, b)).isEqualTo(Verdict.NOISY_NEIGHBOR);
        ContainerWindow ambient = window(50_000, 0, 0, 200);
        ambient.p90Us = 14_655; // the same p90 with only system services behind it: ambient, not a neighbor
        assertThat(rule.judge(ambient, b)).isEqualTo(Verdict.NORMAL);
    }

    static ContainerWindow at(ContainerWindow w, long startMs, long endMs) {
        w.windowStartMillis = startMs;
        w.windowEndMillis = endMs;
        return w;
    }

    @Test
    void windowsThatMayPredateTheContainerAreNotLearnt() {
        // seen here: a new container's first five sliding windows (10 s by 2 s) cover 2, 4 ... 10 s
        // of its life, so their switch-out counts ramp up; learnt, they made the full windows that
        // followed look like a surge of system preemptions and alerted a container alone
        Baseline b = null;
        long[] systemRamp = {22, 95, 138, 176, 236};
        for (int i = 0; i < 5; i++) {
            b = rule.learn(
                    b, at(window(8_000 + 7_000L * i, 0, 0, systemRamp[i]), i * 2_000L - 8_000, i * 2_000L + 2_000));
        }
        assertThat(b.windows)
                .as("all five started before the first window ended")
                .isZero();
        for (int i = 5; i < 10; i++) {
            b = rule.learn(b, at(window(40_000, 0, 0, 230), i * 2_000L - 8_000, i * 2_000L + 2_000));
        }
        assertThat(b.windows).isEqualTo(5);
        assertThat(b.system).isEqualTo(230.0);
        assertThat(rule.judge(window(44_031, 0, 0, 257), b)).isEqualTo(Verdict.NORMAL);
    }

    @Test
    void aWindowIsCalmOnlyWhenNoSignalRose() {
        NoisyNeighborRule local = new NoisyNeighborRule(2.0, 1_000, 20, 20_000, 0.2);
        Baseline b = learnt(local, window(33_000, 0, 0, 150));
        assertThat(local.calm(window(33_000, 0, 0, 150), b)).isTrue();
        assertThat(local.calm(window(2_000, 0, 0, 0), b)).as("falling is calm").isTrue();
        // the first window a neighbor reaches: 50 switch-outs by it, latency not yet doubled
        assertThat(local.calm(window(35_000, 0, 50, 150), b)).isFalse();
        assertThat(local.judge(window(35_000, 0, 50, 150), b)).isEqualTo(Verdict.NORMAL);
        ContainerWindow bulk = window(33_000, 0, 0, 150);
        bulk.meanUs = 9_000;
        assertThat(local.calm(bulk, b)).isFalse();
        assertThat(local.calm(window(33_000, 0, 0, 400), b)).isFalse();
        assertThat(local.calm(window(33_000, 0, 0, 150), null))
                .as("nothing to compare with yet")
                .isTrue();
    }

    @Test
    void aNeighborContainerThatDoublesTheMeanWaitIsANeighbor() {
        // p99 and p90 dominated by the host's long tail; the neighbor delays the bulk of wake-ups
        ContainerWindow quiet = window(45_000, 0, 0, 200);
        quiet.p90Us = 10_000;
        quiet.meanUs = 1_500;
        Baseline b = learnt(rule, quiet);
        ContainerWindow w = window(50_000, 0, 150, 200);
        w.p90Us = 13_000;
        w.meanUs = 5_000;
        assertThat(rule.judge(w, b)).isEqualTo(Verdict.NOISY_NEIGHBOR);
        ContainerWindow system = window(50_000, 0, 0, 450);
        system.p90Us = 13_000;
        system.meanUs = 5_000;
        assertThat(rule.judge(system, b)).as("system services need the p99").isEqualTo(Verdict.NORMAL);
    }

    static ContainerWindow waited(ContainerWindow w, long sameUs, long otherUs, long systemUs) {
        w.waitSameUs = sameUs;
        w.waitOtherUs = otherUs;
        w.waitSystemUs = systemUs;
        return w;
    }

    @Test
    void aContainerThatSleepsBetweenBurstsIsSeenByWhoseTasksItsWaitsEndedBehind() {
        // the CI case: a task waking every millisecond for 20 us is never preempted, so its
        // switch-outs stay 0/0/0 while its p99 goes from 1 ms to 14 ms behind a neighbor's loops
        Baseline b = learnt(rule, waited(window(1_000, 0, 0, 0), 0, 10_000, 5_000));
        assertThat(rule.judge(waited(window(14_000, 0, 0, 0), 0, 2_000_000, 3_000), b))
                .isEqualTo(Verdict.NOISY_NEIGHBOR);
        assertThat(rule.judge(waited(window(14_000, 0, 0, 0), 2_000_000, 10_000, 3_000), b))
                .as("behind its own tasks")
                .isEqualTo(Verdict.SELF_THROTTLED);
        assertThat(rule.judge(waited(window(14_000, 0, 0, 0), 0, 15_000, 3_000), b))
                .as("waits behind others did not rise")
                .isEqualTo(Verdict.SELF_THROTTLED);
        assertThat(rule.judge(waited(window(14_000, 0, 0, 0), 0, 90_000, 0), learnt(rule, window(1_000, 0, 0, 0))))
                .as("a rise under the floor")
                .isEqualTo(Verdict.SELF_THROTTLED);
        assertThat(rule.calm(waited(window(1_000, 0, 0, 0), 0, 500_000, 5_000), b))
                .as("waits behind others rising is not calm")
                .isFalse();
    }

    @Test
    void preemptionsDecideWhoPreemptsMoreWhenThereAreEnoughOfThem() {
        // a CPU-bound container throttled by its own load: preempted by its own tasks, although
        // its wake-ups end behind a neighbor's (which runs while it is throttled)
        Baseline b = learnt(rule, waited(window(1_000, 10, 0, 0), 0, 10_000, 0));
        assertThat(rule.judge(waited(window(14_000, 400, 20, 0), 0, 2_000_000, 0), b))
                .isEqualTo(Verdict.SELF_THROTTLED);
    }

    @Test
    void theBaselineIsAnEwma() {
        Baseline b = rule.learn(null, window(1000, 0, 10, 0));
        b = rule.learn(b, window(2000, 0, 20, 0));
        assertThat(b.p99Us).isEqualTo(1200.0);
        assertThat(b.otherContainer).isEqualTo(12.0);
        b = rule.learn(
                rule.learn(null, waited(window(1000, 0, 0, 0), 0, 1000, 0)), waited(window(1000, 0, 0, 0), 0, 2000, 0));
        assertThat(b.waitOtherUs).isEqualTo(1200.0);
        assertThat(b.windows).isEqualTo(2);
    }
}
