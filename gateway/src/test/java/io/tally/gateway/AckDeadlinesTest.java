package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** One timer for an event loop's write deadlines: late writes fail, answered ones cost no wake-up. */
class AckDeadlinesTest {
    long now = 1_000;
    final List<long[]> timers = new ArrayList<>(); // {id, due, cancelled}
    final List<Runnable> tasks = new ArrayList<>();
    final AckDeadlines deadlines = new AckDeadlines(
            new AckDeadlines.Timers() {
                @Override
                public long set(long delayMs, Runnable task) {
                    timers.add(new long[] {timers.size(), now + delayMs, 0});
                    tasks.add(task);
                    return timers.size() - 1;
                }

                @Override
                public void cancel(long id) {
                    timers.get((int) id)[2] = 1;
                }
            },
            () -> now);

    List<long[]> live() {
        return timers.stream().filter(t -> t[2] == 0).toList();
    }

    /** Moves the clock to `ms` and fires the timers due by then, as the event loop would. */
    void advanceTo(long ms) {
        now = ms;
        for (int i = 0; i < timers.size(); i++) {
            long[] t = timers.get(i);
            if (t[2] == 0 && t[1] <= now) {
                t[2] = 1;
                tasks.get(i).run();
            }
        }
    }

    static boolean timedOut(CompletableFuture<?> f) {
        try {
            f.getNow(null);
            return false;
        } catch (java.util.concurrent.CompletionException e) {
            return e.getCause() instanceof TimeoutException;
        }
    }

    @Test
    void manyWritesShareOneTimer() {
        for (int i = 0; i < 1_000; i++) {
            deadlines.arm(new CompletableFuture<>(), 5_000);
            now++;
        }
        assertThat(timers).hasSize(1);
        assertThat(live().get(0)[1]).isEqualTo(6_000);
    }

    @Test
    void aWriteNotAnsweredByItsDeadlineFailsWithATimeout() {
        CompletableFuture<long[]> acks = new CompletableFuture<>();
        deadlines.arm(acks, 200);
        advanceTo(1_199);
        assertThat(acks).isNotDone();
        advanceTo(1_200);
        assertThat(timedOut(acks)).isTrue();
        assertThat(deadlines.pending()).isZero();
        assertThat(live()).isEmpty(); // nothing left to wait for: the loop sleeps untimed
    }

    @Test
    void answeredWritesAreDroppedAndTheTimerMovesToTheOldestOpenOne() throws Exception {
        CompletableFuture<long[]> first = new CompletableFuture<>();
        deadlines.arm(first, 5_000);
        now = 3_000;
        CompletableFuture<long[]> second = new CompletableFuture<>();
        deadlines.arm(second, 5_000);
        first.complete(new long[] {1});
        advanceTo(6_000); // the first's deadline: answered, so nothing fails; the next is the second's
        assertThat(first.get()).containsExactly(1);
        assertThat(second).isNotDone();
        assertThat(live()).hasSize(1);
        assertThat(live().get(0)[1]).isEqualTo(8_000);
        advanceTo(8_000);
        assertThat(timedOut(second)).isTrue();
    }

    @Test
    void answeredWritesAtTheHeadLeaveTheQueueAsNewOnesArrive() {
        for (int i = 0; i < 100; i++) {
            CompletableFuture<long[]> acks = new CompletableFuture<>();
            deadlines.arm(acks, 5_000);
            acks.complete(new long[] {i});
        }
        assertThat(deadlines.pending()).isEqualTo(1); // only the last, answered after it was armed
    }

    @Test
    void aShorterTimeoutArmedLaterMovesTheTimerEarlier() throws ExecutionException, InterruptedException {
        CompletableFuture<long[]> slow = new CompletableFuture<>();
        CompletableFuture<long[]> quick = new CompletableFuture<>();
        deadlines.arm(slow, 5_000);
        now = 1_010;
        deadlines.arm(quick, 100); // a namespace whose accept window caps its wait
        assertThat(live()).hasSize(1);
        assertThat(live().get(0)[1]).isEqualTo(1_110);
        advanceTo(1_110);
        assertThat(timedOut(quick)).isTrue();
        assertThat(slow).isNotDone();
        assertThat(live().get(0)[1]).isEqualTo(6_000);
        advanceTo(6_000);
        assertThat(timedOut(slow)).isTrue();
    }

    @Test
    void aWriteMadeByALateWritesCallbackIsKept() {
        CompletableFuture<long[]> late = new CompletableFuture<>();
        CompletableFuture<long[]> retry = new CompletableFuture<>();
        late.whenComplete((v, e) -> deadlines.arm(retry, 300));
        deadlines.arm(late, 100);
        advanceTo(1_100);
        assertThat(timedOut(late)).isTrue();
        assertThat(deadlines.pending()).isEqualTo(1);
        advanceTo(1_400);
        assertThat(timedOut(retry)).isTrue();
    }
}
