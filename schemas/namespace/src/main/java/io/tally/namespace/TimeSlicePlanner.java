package io.tally.namespace;

import io.tally.namespace.NamespaceConfig.TimePartition;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * Where an event of a namespace lives: its time slice (a Cassandra table and an Elasticsearch
 * index), its time bucket within the slice, and its event bucket (which spreads a burst of one
 * time series over several partitions). Slices are aligned to the UTC epoch, start-inclusive
 * and end-exclusive, so consecutive slices tile time with no gaps and no overlaps; there is no
 * daylight saving in UTC. Pure arithmetic: the writer job and the readers plan alike.
 */
public final class TimeSlicePlanner {
    private static final DateTimeFormatter DAY = DateTimeFormatter.ofPattern("yyyyMMdd").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter MINUTE = DateTimeFormatter.ofPattern("yyyyMMdd_HHmm").withZone(ZoneOffset.UTC);

    /** A slice [start, end) of a namespace, in microseconds since the epoch. */
    public record Slice(String namespace, long startMicros, long endMicros, String tableName, String indexName) {
        public boolean contains(long micros) {
            return micros >= startMicros && micros < endMicros;
        }
    }

    /** Where one event goes. */
    public record Placement(Slice slice, int timeBucket, int eventBucket) {}

    private final String namespace;
    private final long sliceMicros;
    private final long bucketMicros;
    private final int bucketsPerId;

    public TimeSlicePlanner(NamespaceConfig config) {
        this(config.name(), config.timePartition());
    }

    public TimeSlicePlanner(String namespace, TimePartition p) {
        this.namespace = NamespaceName.require(namespace, "namespace");
        this.sliceMicros = p.secondsPerSlice() * 1_000_000L;
        this.bucketMicros = p.secondsPerBucket() * 1_000_000L;
        this.bucketsPerId = p.bucketsPerId();
    }

    public Slice sliceOf(long eventTimeMicros) {
        long start = Math.floorDiv(eventTimeMicros, sliceMicros) * sliceMicros;
        // Day-or-longer slices are named by their UTC day; shorter ones by day and minute.
        String suffix = (sliceMicros % 86_400_000_000L == 0 ? DAY : MINUTE)
                .format(Instant.ofEpochSecond(Math.floorDiv(start, 1_000_000L)));
        return new Slice(namespace, start, start + sliceMicros, "events_" + suffix,
                "tally-" + namespace + "-" + suffix);
    }

    /**
     * @param eventId the event's id; its hash picks the event bucket, so a retried event
     *     (same id) always lands in the same partition and its write is an identical upsert
     */
    public Placement place(long eventTimeMicros, String eventId) {
        Slice slice = sliceOf(eventTimeMicros);
        int timeBucket = (int) ((eventTimeMicros - slice.startMicros()) / bucketMicros);
        int eventBucket = Math.floorMod(stableHash(eventId), bucketsPerId);
        return new Placement(slice, timeBucket, eventBucket);
    }

    /** The slices that cover [fromMicros, toMicros), oldest first (for creating ahead and for reads). */
    public List<Slice> slicesCovering(long fromMicros, long toMicros) {
        List<Slice> out = new ArrayList<>();
        for (long t = Math.floorDiv(fromMicros, sliceMicros) * sliceMicros; t < toMicros; t += sliceMicros) {
            out.add(sliceOf(t));
        }
        return out;
    }

    /** Time buckets of a slice that overlap [fromMicros, toMicros). */
    public int[] timeBucketsOverlapping(Slice slice, long fromMicros, long toMicros) {
        long from = Math.max(fromMicros, slice.startMicros());
        long to = Math.min(toMicros, slice.endMicros());
        if (from >= to) {
            return new int[0];
        }
        int first = (int) ((from - slice.startMicros()) / bucketMicros);
        int last = (int) ((to - 1 - slice.startMicros()) / bucketMicros);
        int[] out = new int[last - first + 1];
        for (int i = 0; i < out.length; i++) {
            out[i] = first + i;
        }
        return out;
    }

    public int bucketsPerId() {
        return bucketsPerId;
    }

    /** A hash that is the same in every JVM and release (String.hashCode is, by its spec). */
    static int stableHash(String s) {
        return s.hashCode() * 0x9E3779B9;
    }
}
