package io.tally.jobs.counter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class IdleCountersTest {
    @Test
    void aCounterIsDueOnceIdleLongEnoughAndACheckpointCompletedAfterItWentIdle() {
        IdleCounters idle = new IdleCounters(1_000);
        idle.idle("a", 100);
        idle.idle("b", 500);
        assertThat(idle.due(5_000)).isEmpty(); // idle long enough, but no checkpoint since
        idle.snapshotTaken(7, 300);
        assertThat(idle.due(5_000)).isEmpty(); // taken, not completed
        idle.checkpointCompleted(7);
        assertThat(idle.due(5_000)).containsExactly("a"); // b went idle after checkpoint 7's snapshot
        idle.snapshotTaken(8, 600);
        idle.checkpointCompleted(8);
        assertThat(idle.due(1_400)).isEmpty(); // b idle for 900 ms only
        assertThat(idle.due(1_600)).containsExactly("b");
        assertThat(idle.size()).isZero();
    }

    @Test
    void goingIdleAgainStartsTheClockOver() {
        IdleCounters idle = new IdleCounters(1_000);
        idle.idle("a", 100);
        idle.idle("b", 200);
        idle.idle("a", 900); // touched and rolled up again
        idle.snapshotTaken(1, 1_000);
        idle.checkpointCompleted(1);
        assertThat(idle.due(1_300)).containsExactly("b");
        assertThat(idle.due(1_950)).containsExactly("a");
    }

    @Test
    void aLaterCheckpointCompletingCoversAnEarlierOneThatNeverDid() {
        IdleCounters idle = new IdleCounters(10);
        idle.idle("a", 100);
        idle.snapshotTaken(1, 150);
        idle.snapshotTaken(2, 200);
        idle.checkpointCompleted(2); // 1 was declined or subsumed
        idle.checkpointCompleted(1); // a late notice moves nothing back
        assertThat(idle.settled(199, 1_000)).isTrue();
        assertThat(idle.settled(200, 1_000)).isFalse();
        assertThat(idle.due(1_000)).containsExactly("a");
    }

    @Test
    void anIdleTimeOfZeroIsRefused() {
        assertThatThrownBy(() -> new IdleCounters(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
