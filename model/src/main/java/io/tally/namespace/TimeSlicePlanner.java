package io.tally.namespace;

import io.tally.model.cassandra.SliceTable;
import io.tally.model.elasticsearch.IndexNames;
import io.tally.namespace.NamespaceConfig.EarlierPartition;
import io.tally.namespace.NamespaceConfig.EventBuckets;
import io.tally.namespace.NamespaceConfig.TimePartition;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * Where an event of a namespace lives: its time slice (a Cassandra table and an Elasticsearch
 * index), its time bucket within the slice, and its event bucket (which spreads a burst of one
 * time series over several partitions, or cuts the time bucket into consecutive ranges). Slices are aligned to the UTC epoch, start-inclusive
 * and end-exclusive, so consecutive slices tile time with no gaps and no overlaps; there is no
 * daylight saving in UTC. Pure arithmetic: the writer job and the readers plan alike.
 *
 * <p>A namespace whose time_partition changed has epochs: each earlier partition lays out the
 * slices before its "until" (a boundary of both grids), the current one the slices after the
 * last. So a change applies to future slices only, and every slice carries its own layout.
 */
public final class TimeSlicePlanner {
    private static final DateTimeFormatter DAY =
            DateTimeFormatter.ofPattern("yyyyMMdd").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter MINUTE =
            DateTimeFormatter.ofPattern("yyyyMMdd_HHmm").withZone(ZoneOffset.UTC);

    /** A slice [start, end) of a namespace, in microseconds since the epoch, with the layout of its epoch. */
    public record Slice(
            String namespace,
            long startMicros,
            long endMicros,
            String tableName,
            String indexName,
            long bucketMicros,
            int bucketsPerId,
            EventBuckets eventBuckets) {
        public boolean contains(long micros) {
            return micros >= startMicros && micros < endMicros;
        }

        /** Whether each event bucket holds one range of event time, the later buckets the later times. */
        public boolean eventBucketsByTime() {
            return eventBuckets == EventBuckets.EVENT_TIME && bucketsPerId > 1;
        }

        /**
         * The event times [first, end) event bucket `eventBucket` of time bucket `timeBucket` holds,
         * when the slice's event buckets are by time ({@link #eventBucketsByTime}): offset o into the
         * time bucket lands in floor(o * bucketsPerId / bucketMicros), so bucket k starts at
         * ceil(k * bucketMicros / bucketsPerId).
         */
        public long[] eventBucketTimes(int timeBucket, int eventBucket) {
            long base = startMicros + timeBucket * bucketMicros;
            return new long[] {
                base + ceilDiv(eventBucket * bucketMicros, bucketsPerId),
                base + ceilDiv((eventBucket + 1) * bucketMicros, bucketsPerId)
            };
        }
    }

    /** Where one event goes. */
    public record Placement(Slice slice, int timeBucket, int eventBucket) {}

    /** A partition and the instant it stops applying (Long.MAX_VALUE for the current one). */
    private record Epoch(
            long untilMicros, long sliceMicros, long bucketMicros, int bucketsPerId, EventBuckets eventBuckets) {}

    private final String namespace;
    private final List<Epoch> epochs = new ArrayList<>();

    /**
     * Planners by namespace for a per-event caller: made again when the namespace's config is
     * another instance (a change; the jobs parse a config once per version). Not keyed by the
     * config itself: hashing a whole config per event was 28% of the counter decoder's time.
     */
    public static final class Cache {
        private final java.util.Map<String, java.util.Map.Entry<NamespaceConfig, TimeSlicePlanner>> byName =
                new java.util.HashMap<>();

        public TimeSlicePlanner of(NamespaceConfig ns) {
            var known = byName.get(ns.name());
            if (known == null || known.getKey() != ns) {
                known = java.util.Map.entry(ns, new TimeSlicePlanner(ns));
                byName.put(ns.name(), known);
            }
            return known.getValue();
        }
    }

    public TimeSlicePlanner(NamespaceConfig config) {
        this(config.name(), config.timePartition(), config.partitionHistory());
    }

    public TimeSlicePlanner(String namespace, TimePartition p) {
        this(namespace, p, List.of());
    }

    public TimeSlicePlanner(String namespace, TimePartition current, List<EarlierPartition> history) {
        this.namespace = NamespaceName.require(namespace, "namespace");
        for (EarlierPartition e : history) {
            epochs.add(epoch(e.untilMicros(), e.partition()));
        }
        epochs.add(epoch(Long.MAX_VALUE, current));
    }

    private static Epoch epoch(long until, TimePartition p) {
        return new Epoch(
                until,
                p.secondsPerSlice() * 1_000_000L,
                p.secondsPerBucket() * 1_000_000L,
                p.bucketsPerId(),
                p.eventBuckets());
    }

    private Epoch epochOf(long micros) {
        for (Epoch e : epochs) {
            if (micros < e.untilMicros) {
                return e;
            }
        }
        return epochs.get(epochs.size() - 1);
    }

    public Slice sliceOf(long eventTimeMicros) {
        Epoch e = epochOf(eventTimeMicros);
        long start = Math.floorDiv(eventTimeMicros, e.sliceMicros) * e.sliceMicros;
        // Day-or-longer slices are named by their UTC day; shorter ones by day and minute.
        String suffix = (e.sliceMicros % 86_400_000_000L == 0 ? DAY : MINUTE)
                .format(Instant.ofEpochSecond(Math.floorDiv(start, 1_000_000L)));
        return new Slice(
                namespace,
                start,
                start + e.sliceMicros,
                SliceTable.name(suffix),
                IndexNames.sliceIndex(namespace, suffix),
                e.bucketMicros,
                e.bucketsPerId,
                e.eventBuckets);
    }

    /**
     * @param eventId the event's id; its hash picks the event bucket (unless the slice's event
     *     buckets are by time), so a retried event (same id and time) always lands in the same
     *     partition and its write is an identical upsert
     */
    public Placement place(long eventTimeMicros, String eventId) {
        Slice slice = sliceOf(eventTimeMicros);
        long offset = eventTimeMicros - slice.startMicros();
        int timeBucket = (int) (offset / slice.bucketMicros());
        int eventBucket = slice.eventBuckets() == EventBuckets.EVENT_TIME
                ? (int) (offset % slice.bucketMicros() * slice.bucketsPerId() / slice.bucketMicros())
                : Math.floorMod(stableHash(eventId), slice.bucketsPerId());
        return new Placement(slice, timeBucket, eventBucket);
    }

    /** The slices that cover [fromMicros, toMicros), oldest first (for creating ahead and for reads). */
    public List<Slice> slicesCovering(long fromMicros, long toMicros) {
        List<Slice> out = new ArrayList<>();
        for (long t = sliceOf(fromMicros).startMicros(); t < toMicros; ) {
            Slice s = sliceOf(t);
            out.add(s);
            t = s.endMicros();
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
        int first = (int) ((from - slice.startMicros()) / slice.bucketMicros());
        int last = (int) ((to - 1 - slice.startMicros()) / slice.bucketMicros());
        int[] out = new int[last - first + 1];
        for (int i = 0; i < out.length; i++) {
            out[i] = first + i;
        }
        return out;
    }

    /**
     * When a change from one time_partition to another may take effect: the first boundary of
     * both slice grids at or after notBefore (the end of the slices already made ahead).
     */
    public static long changeBoundary(TimePartition from, TimePartition to, long notBeforeMicros) {
        long a = from.secondsPerSlice();
        long b = to.secondsPerSlice();
        long lcm = a / gcd(a, b) * b * 1_000_000L;
        return Math.floorDiv(notBeforeMicros + lcm - 1, lcm) * lcm;
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /** A hash that is the same in every JVM and release (String.hashCode is, by its spec). */
    /** a / b rounded up, for a >= 0 and b > 0 (Math.ceilDiv is Java 18's). */
    static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    static int stableHash(String s) {
        return s.hashCode() * 0x9E3779B9;
    }
}
