package io.tally.namespace;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.namespace.NamespaceConfig.TimePartition;
import io.tally.namespace.TimeSlicePlanner.Slice;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TimeSlicePlannerTest {
    static long micros(String iso) {
        Instant t = Instant.parse(iso);
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000;
    }

    final TimeSlicePlanner daily = new TimeSlicePlanner("playback", new TimePartition(86_400, 3_600, 4));
    final TimeSlicePlanner hourly = new TimeSlicePlanner("sched.runq", new TimePartition(3_600, 600, 2));

    @Test
    void dailySlicesAreUtcDaysNamedByDay() {
        Slice s = daily.sliceOf(micros("2026-11-22T23:59:59.999999Z"));
        assertThat(s.tableName()).isEqualTo("events_20261122");
        assertThat(s.indexName()).isEqualTo("tally-playback-20261122");
        assertThat(s.startMicros()).isEqualTo(micros("2026-11-22T00:00:00Z"));
        assertThat(s.endMicros()).isEqualTo(micros("2026-11-23T00:00:00Z"));
        assertThat(daily.sliceOf(micros("2026-11-23T00:00:00Z")).tableName()).isEqualTo("events_20261123");
    }

    @Test
    void boundariesAreStartInclusiveEndExclusive() {
        long midnight = micros("2026-11-23T00:00:00Z");
        assertThat(daily.sliceOf(midnight - 1).contains(midnight)).isFalse();
        assertThat(daily.sliceOf(midnight).contains(midnight)).isTrue();
        assertThat(daily.place(midnight - 1, "e").timeBucket()).isEqualTo(23);
        assertThat(daily.place(midnight, "e").timeBucket()).isEqualTo(0);
    }

    @Test
    void subDaySlicesAreNamedByMinute() {
        Slice s = hourly.sliceOf(micros("2026-03-29T01:30:00Z")); // a European DST night: nothing special in UTC
        assertThat(s.tableName()).isEqualTo("events_20260329_0100");
        assertThat(s.indexName()).isEqualTo("tally-sched.runq-20260329_0100");
        assertThat(hourly.place(micros("2026-03-29T01:59:59Z"), "e").timeBucket())
                .isEqualTo(5);
    }

    @Test
    void slicesTileTimeWithNoGapsOrOverlaps() {
        List<Slice> slices = hourly.slicesCovering(micros("2026-11-22T22:17:00Z"), micros("2026-11-23T03:00:00Z"));
        assertThat(slices).hasSize(5);
        for (int i = 1; i < slices.size(); i++) {
            assertThat(slices.get(i).startMicros()).isEqualTo(slices.get(i - 1).endMicros());
        }
        assertThat(slices.get(0).contains(micros("2026-11-22T22:17:00Z"))).isTrue();
        assertThat(slices.get(slices.size() - 1).endMicros()).isEqualTo(micros("2026-11-23T03:00:00Z"));
    }

    @Test
    void beforeTheEpochToo() {
        Slice s = daily.sliceOf(-1);
        assertThat(s.tableName()).isEqualTo("events_19691231");
        assertThat(s.contains(-1)).isTrue();
    }

    @Test
    void timeBucketsOverlappingARange() {
        Slice s = daily.sliceOf(micros("2026-11-22T12:00:00Z"));
        assertThat(daily.timeBucketsOverlapping(s, micros("2026-11-22T10:30:00Z"), micros("2026-11-22T12:00:00Z")))
                .containsExactly(10, 11);
        assertThat(daily.timeBucketsOverlapping(s, micros("2026-11-21T00:00:00Z"), micros("2026-11-24T00:00:00Z")))
                .hasSize(24);
        assertThat(daily.timeBucketsOverlapping(s, micros("2026-11-23T00:00:00Z"), micros("2026-11-24T00:00:00Z")))
                .isEmpty();
    }

    @Test
    void eventBucketsAreStablePerIdAndSpreadAcrossIds() {
        long t = micros("2026-11-22T12:00:00Z");
        assertThat(daily.place(t, "same-id").eventBucket())
                .isEqualTo(daily.place(t + 5, "same-id").eventBucket());
        Set<Integer> used = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            int b = daily.place(t, "id-" + i).eventBucket();
            assertThat(b).isBetween(0, 3);
            used.add(b);
        }
        assertThat(used).containsExactlyInAnyOrder(0, 1, 2, 3);
    }

    @Test
    void aChangedPartitionLaysOutOnlyTheSlicesAfterItsBoundary() {
        long boundary = micros("2026-11-24T00:00:00Z");
        TimeSlicePlanner changed = new TimeSlicePlanner(
                "playback",
                new TimePartition(3_600, 600, 2),
                List.of(new NamespaceConfig.EarlierPartition(boundary, new TimePartition(86_400, 3_600, 4))));
        Slice before = changed.sliceOf(micros("2026-11-23T23:30:00Z"));
        assertThat(before.tableName()).isEqualTo("events_20261123");
        assertThat(before.bucketsPerId()).isEqualTo(4);
        assertThat(before)
                .isEqualTo(daily.sliceOf(micros("2026-11-23T23:30:00Z"))); // an existing slice keeps its layout
        Slice after = changed.sliceOf(boundary);
        assertThat(after.tableName()).isEqualTo("events_20261124_0000");
        assertThat(after.endMicros() - after.startMicros()).isEqualTo(3_600_000_000L);
        assertThat(changed.place(boundary + 601_000_000L, "e").timeBucket()).isEqualTo(1);
        // reads across the boundary tile time with no gap or overlap
        List<Slice> span = changed.slicesCovering(micros("2026-11-23T12:00:00Z"), micros("2026-11-24T02:30:00Z"));
        assertThat(span)
                .extracting(Slice::tableName)
                .containsExactly(
                        "events_20261123", "events_20261124_0000", "events_20261124_0100", "events_20261124_0200");
        for (int i = 1; i < span.size(); i++) {
            assertThat(span.get(i).startMicros()).isEqualTo(span.get(i - 1).endMicros());
        }
    }

    @Test
    void aChangeWaitsForABoundaryOfBothGrids() {
        TimePartition day = new TimePartition(86_400, 3_600, 4);
        TimePartition hour = new TimePartition(3_600, 600, 2);
        assertThat(TimeSlicePlanner.changeBoundary(hour, day, micros("2026-11-22T13:00:00Z")))
                .isEqualTo(micros("2026-11-23T00:00:00Z"));
        assertThat(TimeSlicePlanner.changeBoundary(day, hour, micros("2026-11-24T00:00:00Z")))
                .isEqualTo(micros("2026-11-24T00:00:00Z"));
        TimePartition twoDays = new TimePartition(172_800, 3_600, 4);
        long b = TimeSlicePlanner.changeBoundary(day, twoDays, micros("2026-11-22T00:00:01Z"));
        assertThat(b % 172_800_000_000L).isZero();
    }

    @Test
    void eventBucketsByTimeCutTheTimeBucketIntoConsecutiveRanges() {
        TimeSlicePlanner byTime = new TimeSlicePlanner(
                "playback", new TimePartition(86_400, 3_600, 4, NamespaceConfig.EventBuckets.EVENT_TIME));
        long hour = micros("2026-11-22T12:00:00Z");
        assertThat(byTime.place(hour, "a").eventBucket()).isZero();
        assertThat(byTime.place(hour + 899_999_999L, "a").eventBucket()).isZero();
        assertThat(byTime.place(hour + 900_000_000L, "a").eventBucket()).isEqualTo(1);
        assertThat(byTime.place(hour + 3_599_999_999L, "b").eventBucket()).isEqualTo(3);
        assertThat(byTime.place(hour + 3_600_000_000L, "b").timeBucket()).isEqualTo(13);
        assertThat(byTime.place(hour + 3_600_000_000L, "b").eventBucket()).isZero();
        // a burst at one instant stays in one partition, whatever its ids
        Set<Integer> used = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            used.add(byTime.place(hour + 1_000_000L, "id-" + i).eventBucket());
        }
        assertThat(used).containsExactly(0);
        Slice s = byTime.sliceOf(hour);
        assertThat(s.eventBucketsByTime()).isTrue();
        assertThat(daily.sliceOf(hour).eventBucketsByTime()).isFalse();
        assertThat(s.eventBucketTimes(12, 1)).containsExactly(hour + 900_000_000L, hour + 1_800_000_000L);
    }

    @Test
    void anEventBucketsTimesHoldExactlyTheEventsPlacedInIt() {
        // 7 buckets do not divide an hour of microseconds: the ranges still tile it with no gap
        TimeSlicePlanner byTime = new TimeSlicePlanner(
                "playback", new TimePartition(86_400, 3_600, 7, NamespaceConfig.EventBuckets.EVENT_TIME));
        long hour = micros("2026-11-22T05:00:00Z");
        Slice s = byTime.sliceOf(hour);
        long previousEnd = hour;
        for (int b = 0; b < 7; b++) {
            long[] range = s.eventBucketTimes(5, b);
            assertThat(range[0]).isEqualTo(previousEnd);
            for (long t : new long[] {range[0], range[0] + 1, range[1] - 2, range[1] - 1}) {
                assertThat(byTime.place(t, "e").eventBucket()).as("t=%d", t).isEqualTo(b);
            }
            previousEnd = range[1];
        }
        assertThat(previousEnd).isEqualTo(hour + 3_600_000_000L);
    }
}
