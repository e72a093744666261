package io.tally.jobs.sched;

import java.io.Serializable;
import java.nio.ByteBuffer;
import org.HdrHistogram.AbstractHistogram;
import org.HdrHistogram.IntCountsHistogram;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.typeinfo.TypeInfo;

/**
 * The window accumulator: an HdrHistogram of run-queue latency (mergeable, 2 significant
 * digits, 1 us to 10 s), switch-out sums by cause and the sampled waits summed by the cause
 * that ended them.
 *
 * <p>The histogram lives on the heap while the window fills and is compressed only when the
 * accumulator is written ({@link WindowSketchAccSerializer}: a checkpoint, or each access on the
 * RocksDB backend). Until 2026-11 it was kept compressed and every sample inflated and deflated
 * it once for each of the (size / slide) windows it fell in: most of the idle TaskManager's
 * noisy-neighbor CPU, for the stack's own scheduler samples.
 */
public class WindowSketch implements AggregateFunction<SchedObservation, WindowSketch.Acc, WindowSketch.Acc> {
    static final long MAX_US = 10_000_000L;

    /**
     * A window's sums and histogram. The public fields are the layout the POJO serializer wrote
     * into checkpoints before 2026-11 (restored through it, then written by {@link
     * WindowSketchAccSerializer}); {@code histogram} holds the compressed histogram while {@code
     * live} is null, and is stale once {@code live} exists.
     */
    @TypeInfo(WindowSketchAccTypeInfo.class)
    public static class Acc implements Serializable {
        public byte[] histogram = new byte[0];
        public long sameContainer;
        public long otherContainer;
        public long system;
        public long waitSameUs;
        public long waitOtherUs;
        public long waitSystemUs;
        /** The histogram being filled (int counts: 9 KB a window at 2 significant digits). */
        transient AbstractHistogram live;

        /** The histogram (the live one, or decoded from its compressed bytes); not to be changed. */
        AbstractHistogram histogram() {
            if (live != null) {
                return live;
            }
            return histogram.length == 0 ? new IntCountsHistogram(MAX_US, 2) : decode(histogram);
        }

        void record(long us) {
            if (live == null) {
                live = histogram.length == 0 ? new IntCountsHistogram(MAX_US, 2) : decode(histogram);
                histogram = new byte[0];
            }
            live.recordValue(us);
        }

        /** Adds another window's sums (switch-outs and waits by cause) to this one's. */
        void addSums(Acc other) {
            sameContainer += other.sameContainer;
            otherContainer += other.otherContainer;
            system += other.system;
            waitSameUs += other.waitSameUs;
            waitOtherUs += other.waitOtherUs;
            waitSystemUs += other.waitSystemUs;
        }

        /** The histogram in HdrHistogram's compressed encoding. */
        byte[] compressed() {
            if (live == null) {
                return histogram;
            }
            ByteBuffer b = ByteBuffer.allocate(live.getNeededByteBufferCapacity());
            int n = live.encodeIntoCompressedByteBuffer(b);
            return java.util.Arrays.copyOf(b.array(), n);
        }

        private static AbstractHistogram decode(byte[] compressed) {
            try {
                return IntCountsHistogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(compressed), MAX_US);
            } catch (java.util.zip.DataFormatException e) {
                throw new IllegalStateException("a window's histogram is corrupt", e);
            }
        }
    }

    @Override
    public Acc createAccumulator() {
        return new Acc();
    }

    @Override
    public Acc add(SchedObservation o, Acc acc) {
        if (o.switchOut) {
            switch (o.cause) {
                case "same_container" -> acc.sameContainer += o.count;
                case "other_container" -> acc.otherContainer += o.count;
                default -> acc.system += o.count;
            }
        } else {
            long us = Math.max(1, Math.min(MAX_US, o.latencyUs));
            acc.record(us);
            if (o.cause != null) {
                switch (o.cause) {
                    case "same_container" -> acc.waitSameUs += us;
                    case "other_container" -> acc.waitOtherUs += us;
                    default -> acc.waitSystemUs += us;
                }
            }
        }
        return acc;
    }

    @Override
    public Acc getResult(Acc acc) {
        return acc;
    }

    @Override
    public Acc merge(Acc a, Acc b) {
        Acc out = new Acc();
        out.live = new IntCountsHistogram(MAX_US, 2);
        out.live.add(a.histogram());
        out.live.add(b.histogram());
        out.addSums(a);
        out.addSums(b);
        return out;
    }

    /** The summary of a window's accumulator. */
    static ContainerWindow summary(String key, long start, long end, Acc acc) {
        AbstractHistogram h = acc.histogram();
        ContainerWindow w = new ContainerWindow();
        int slash = key.indexOf('/');
        w.host = key.substring(0, slash);
        w.container = key.substring(slash + 1);
        w.windowStartMillis = start;
        w.windowEndMillis = end;
        w.samples = h.getTotalCount();
        w.meanUs = Math.round(h.getMean());
        w.p50Us = h.getValueAtPercentile(50);
        w.p90Us = h.getValueAtPercentile(90);
        w.p99Us = h.getValueAtPercentile(99);
        w.sameContainer = acc.sameContainer;
        w.otherContainer = acc.otherContainer;
        w.system = acc.system;
        w.waitSameUs = acc.waitSameUs;
        w.waitOtherUs = acc.waitOtherUs;
        w.waitSystemUs = acc.waitSystemUs;
        return w;
    }
}
