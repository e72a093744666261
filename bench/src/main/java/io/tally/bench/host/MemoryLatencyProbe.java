package io.tally.bench.host;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * How long one dependent random read of memory takes on this host: a pointer chase over an
 * array of the given size, timed by the thread's own CPU time (so a busy box's scheduling does
 * not count, its caches and memory do). The stack's servers are JVMs with heaps of hundreds of
 * MB, and on a host where this read is slow every one of them costs more CPU an operation
 * (2026-11-30: 450 ns at 1 GiB, where a server's DRAM typically answers in 80-120 ns), so each
 * benchmark report records it beside its figures.
 *
 * <p>Arguments: MiB to chase over, steps a round. Prints one JSON line: the median and the
 * min-max of 3 rounds, ns a step. Run it with -XX:+UseTransparentHugePages to see the same read
 * on 2 MiB pages.
 */
public final class MemoryLatencyProbe {
    private MemoryLatencyProbe() {}

    public static void main(String[] args) {
        int mib = args.length > 0 ? Integer.parseInt(args[0]) : 256;
        int steps = args.length > 1 ? Integer.parseInt(args[1]) : 2_000_000;
        int[] next = cycle(mib * (1024 * 1024 / Integer.BYTES), new SplittableRandom(42));
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[] ns = new double[3];
        int at = 0;
        for (int round = 0; round < ns.length; round++) {
            long t0 = threads.getCurrentThreadCpuTime();
            for (int s = 0; s < steps; s++) {
                at = next[at];
            }
            ns[round] = (threads.getCurrentThreadCpuTime() - t0) / (double) steps;
        }
        Arrays.sort(ns);
        // `at` printed so the chase cannot be optimised away
        System.out.printf(
                "{\"mib\": %d, \"steps\": %d, \"ns_per_read\": %.1f, \"min\": %.1f, \"max\": %.1f, \"end\": %d}%n",
                mib, steps, ns[1], ns[0], ns[2], at);
    }

    /** One random cycle through every index (Sattolo's shuffle), so the chase visits all of them. */
    static int[] cycle(int n, SplittableRandom random) {
        int[] next = new int[n];
        for (int i = 0; i < n; i++) {
            next[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i);
            int t = next[i];
            next[i] = next[j];
            next[j] = t;
        }
        return next;
    }
}
