package io.tally.jobs.sched;

import java.io.Serializable;
import java.nio.ByteBuffer;
import org.HdrHistogram.Histogram;
import org.apache.flink.api.common.functions.AggregateFunction;

/**
 * The window accumulator: an HdrHistogram of run-queue latency (mergeable, 2 significant
 * digits, 1 us to 10 s), switch-out sums by cause and the sampled waits summed by the cause
 * that ended them. Kept as the histogram's compressed bytes between calls, so the state stays
 * small and is not Kryo-serialized as an object.
 */
public class WindowSketch implements AggregateFunction<SchedObservation, WindowSketch.Acc, WindowSketch.Acc> {
    static final long MAX_US = 10_000_000L;

    public static class Acc implements Serializable {
        public byte[] histogram = new byte[0];
        public long sameContainer;
        public long otherContainer;
        public long system;
        public long waitSameUs;
        public long waitOtherUs;
        public long waitSystemUs;

        Histogram histogram() {
            if (histogram.length == 0) {
                return new Histogram(MAX_US, 2);
            }
            try {
                return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(histogram), MAX_US);
            } catch (java.util.zip.DataFormatException e) {
                throw new IllegalStateException(e);
            }
        }

        void store(Histogram h) {
            ByteBuffer b = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
            int n = h.encodeIntoCompressedByteBuffer(b);
            histogram = java.util.Arrays.copyOf(b.array(), n);
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
            Histogram h = acc.histogram();
            long us = Math.max(1, Math.min(MAX_US, o.latencyUs));
            h.recordValue(us);
            acc.store(h);
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
        Histogram h = a.histogram();
        h.add(b.histogram());
        Acc out = new Acc();
        out.store(h);
        out.sameContainer = a.sameContainer + b.sameContainer;
        out.otherContainer = a.otherContainer + b.otherContainer;
        out.system = a.system + b.system;
        out.waitSameUs = a.waitSameUs + b.waitSameUs;
        out.waitOtherUs = a.waitOtherUs + b.waitOtherUs;
        out.waitSystemUs = a.waitSystemUs + b.waitSystemUs;
        return out;
    }

    /** The summary of a window's accumulator. */
    static ContainerWindow summary(String key, long start, long end, Acc acc) {
        Histogram h = acc.histogram();
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
