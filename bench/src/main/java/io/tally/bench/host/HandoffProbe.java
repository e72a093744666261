package io.tally.bench.host;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * What one hand-off between two threads costs on this host: two threads pass a turn back and
 * forth, each parking until the other unparks it (a futex wait and wake, the way the stack's
 * servers pass a request from an event loop to a worker, to a driver's I/O thread and back),
 * timed by both threads' own CPU time. A request crosses a dozen such hand-offs between the
 * gateway and Cassandra, so on a host where one costs several µs of CPU every server's per-request
 * floor rises with it while a memory read does not (2026-12-02: a bare Netty server 38 µs a
 * request on a host whose random memory reads were the fastest measured).
 *
 * <p>Arguments: round trips a round (default 20,000). Prints one JSON line: µs of CPU a hand-off
 * (both threads' CPU over two hand-offs a round trip) and µs of wall time a round trip, each the
 * median and min-max of 3 rounds after one unmeasured round.
 */
public final class HandoffProbe {
    private HandoffProbe() {}

    /** The two threads' CPU and the wall time of one round of `trips` round trips, in ns. */
    record Round(long cpuNanos, long wallNanos, int trips) {
        double cpuMicrosPerHandoff() {
            return cpuNanos / 1_000.0 / (2.0 * trips);
        }

        double wallMicrosPerRoundTrip() {
            return wallNanos / 1_000.0 / trips;
        }
    }

    /** A turn one thread waits for: set by the other, which then unparks it. */
    static final class Turn {
        volatile boolean mine;
        volatile Thread owner;

        void await() {
            while (!mine) {
                LockSupport.park(this);
            }
            mine = false;
        }

        void give() {
            mine = true;
            LockSupport.unpark(owner);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        int trips = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        run(trips); // unmeasured: the JIT compiles the loops
        double[] cpu = new double[3];
        double[] wall = new double[3];
        for (int i = 0; i < cpu.length; i++) {
            Round r = run(trips);
            cpu[i] = r.cpuMicrosPerHandoff();
            wall[i] = r.wallMicrosPerRoundTrip();
        }
        Arrays.sort(cpu);
        Arrays.sort(wall);
        System.out.printf(
                "{\"round_trips\": %d, \"cpu_us_per_handoff\": %.2f, \"min\": %.2f, \"max\": %.2f,"
                        + " \"wall_us_per_round_trip\": %.2f}%n",
                trips, cpu[1], cpu[0], cpu[2], wall[1]);
    }

    /** One round: `trips` round trips between this thread and another. */
    static Round run(int trips) throws InterruptedException {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Turn ping = new Turn();
        Turn pong = new Turn();
        ping.owner = Thread.currentThread();
        long[] otherCpu = new long[1];
        Thread other = new Thread(
                () -> {
                    long t0 = threads.getCurrentThreadCpuTime();
                    for (int i = 0; i < trips; i++) {
                        pong.await();
                        ping.give();
                    }
                    otherCpu[0] = threads.getCurrentThreadCpuTime() - t0;
                },
                "handoff-probe");
        pong.owner = other;
        other.start();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long wall0 = System.nanoTime();
        for (int i = 0; i < trips; i++) {
            pong.give();
            ping.await();
        }
        long wall = System.nanoTime() - wall0;
        long cpu = threads.getCurrentThreadCpuTime() - cpu0;
        other.join();
        return new Round(cpu + otherCpu[0], wall, trips);
    }
}
