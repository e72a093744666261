package io.tally.jobs.counter;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.cassandra.EventRow;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.testing.CollectSink;
import io.tally.jobs.testing.SeedControlPlane;
import io.tally.jobs.testing.StaticRegistry;
import io.tally.model.TallySchemas;
import io.tally.serde.AvroSerde;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;

class CounterRollupJobITCase {
    static final long T0_MS = 1_795_000_000_000L;
    final AvroSerde serde = new AvroSerde(new StaticRegistry());
    final List<RawRecord> input = new ArrayList<>();

    /** A counter event appended at appendMs (LogAppendTime) with an event time of eventMs. */
    void event(String ns, String counter, String op, long delta, long eventMs, String id, long appendMs) {
        GenericRecord e = new GenericRecordBuilder(TallySchemas.COUNTER_EVENT)
                .set("namespace", ns)
                .set("counter", counter)
                .set(
                        "op",
                        new GenericData.EnumSymbol(
                                TallySchemas.COUNTER_EVENT.getField("op").schema(), op))
                .set("delta", delta)
                .set("event_time", eventMs * 1000)
                .set("event_id", id)
                .set("source", "test")
                .build();
        input.add(new RawRecord(
                "tally.counter.events",
                0,
                input.size(),
                appendMs,
                (ns + "/" + counter).getBytes(StandardCharsets.UTF_8),
                serde.serialize("tally.counter.events", e)));
    }

    void heartbeat(long appendMs) {
        input.add(new RawRecord("tally.counter.events", 0, input.size(), appendMs, Heartbeats.KEY, null));
    }

    /** A watermark after every record, so the test sees the rollups that event time allows mid-stream. */
    static final class EveryRecord implements WatermarkGenerator<RawRecord> {
        @Override
        public void onEvent(RawRecord r, long ts, WatermarkOutput out) {
            out.emitWatermark(new Watermark(ts));
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput out) {}
    }

    @Test
    void dedupsRollsUpOverTheImmutableWindowAndClearsInEventTimeOrder() throws Exception {
        // video_views: EVENTUAL, accept 5 s, skew 500 ms, coalesce 1 s
        event("video_views", "c1", "ADD", 5, T0_MS, "e1", T0_MS + 100);
        event("video_views", "c1", "ADD", 5, T0_MS, "e1", T0_MS + 150); // a retry: counted once
        event("video_views", "c1", "ADD", 6, T0_MS, "e1", T0_MS + 160); // reuse, other payload
        event("video_views", "c1", "ADD", 3, T0_MS + 1000, "e2", T0_MS + 1100);
        event("video_views", "c1", "CLEAR", 0, T0_MS + 2000, "e3", T0_MS + 2100);
        event("video_views", "c1", "ADD", 10, T0_MS + 3000, "e4", T0_MS + 3100);
        event("video_views", "c1", "ADD", 1, T0_MS + 1500, "e5", T0_MS + 3200); // late but before the clear
        event("video_views", "c1", "ADD", 1, T0_MS - 10_000, "old", T0_MS + 3300); // outside the window
        event("nope", "c1", "ADD", 1, T0_MS, "x", T0_MS + 3400);
        event("playback", "c1", "ADD", 1, T0_MS, "y", T0_MS + 3500);
        event("ad_clicks", "a1", "ADD", 7, T0_MS + 3000, "a", T0_MS + 3600);
        heartbeat(T0_MS + 20_000); // rollup at T0 + 14.5 s
        event("video_views", "c1", "ADD", 2, T0_MS + 18_000, "e6", T0_MS + 20_500);
        input.add(new RawRecord("tally.counter.events", 0, input.size(), T0_MS + 20_600, null, new byte[] {1, 2, 3}));

        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2);
        CollectSink<EventRow> log = new CollectSink<>("counter-log");
        CollectSink<RollupWrite> rollups = new CollectSink<>("counter-rollups");
        CollectSink<RollupWrite> view = new CollectSink<>("counter-view");
        CollectSink<DeadLetterRecord> dead = new CollectSink<>("counter-dead");
        CounterRollupJob.build(
                env.fromData(TypeInformation.of(RawRecord.class), input.toArray(new RawRecord[0]))
                        .setParallelism(1)
                        .map(SeedControlPlane.afterDelay(2000))
                        .returns(RawRecord.class)
                        .setParallelism(1)
                        .assignTimestampsAndWatermarks(WatermarkStrategy.<RawRecord>forGenerator(c -> new EveryRecord())
                                .withTimestampAssigner((r, ts) -> r.timestampMillis))
                        .setParallelism(1),
                SeedControlPlane.stream(env),
                log,
                rollups,
                view,
                dead,
                StaticRegistry::new,
                0,
                new Heartbeats.Branch(new CollectSink<>("counter-heartbeats"), 3, 100, 6),
                CounterRollupJob.IdleCounterPolicy.KEEP);
        env.execute("test");
        // the heartbeat branch runs with the job: every tick reaches its sink (partition = tick mod 3)
        assertThat(CollectSink.<Long>get("counter-heartbeats")).containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L);

        assertThat(CollectSink.<EventRow>get("counter-log"))
                .extracting(r -> r.eventId + ":" + r.itemKey + "=" + new String(r.itemValue, StandardCharsets.UTF_8))
                .containsExactlyInAnyOrder(
                        "e1:ADD=5", "e2:ADD=3", "e3:CLEAR=0", "e4:ADD=10", "e5:ADD=1", "e6:ADD=2", "a:ADD=7");
        EventRow a = CollectSink.<EventRow>get("counter-log").stream()
                .filter(r -> r.eventId.equals("a"))
                .findFirst()
                .orElseThrow();
        assertThat(a.keyspace).isEqualTo("ns_ad_clicks");
        assertThat(a.timeSeriesId).isEqualTo("a1");

        List<RollupWrite> c1 = CollectSink.<RollupWrite>get("counter-rollups").stream()
                .filter(w -> w.counter.equals("c1") && w.kind == RollupWrite.Kind.ROLLUP)
                .toList();
        long mid = (T0_MS + 14_500) * 1000;
        assertThat(c1).anySatisfy(w -> {
            assertThat(w.timeMicros).isEqualTo(mid);
            assertThat(w.count).isEqualTo(10); // the clear at T0+2 s drops e1, e2 and e5 whatever their arrival order
        });
        RollupWrite last = c1.get(c1.size() - 1);
        assertThat(last.count).isEqualTo(12);
        assertThat(c1).allSatisfy(w -> assertThat(w.count).isIn(10L, 12L));
        assertThat(c1).extracting(w -> w.timeMicros).isSorted();
        assertThat(CollectSink.<RollupWrite>get("counter-rollups")).anySatisfy(w -> {
            assertThat(w.counter).isEqualTo("a1");
            assertThat(w.count).isEqualTo(7);
        });
        // EVENTUAL rollups are published for the gateways' view too, with the counter's last write;
        // of ACCURATE a1 the view gets its live total (rollup plus pending), never the bare rollup
        List<RollupWrite> viewed = CollectSink.<RollupWrite>get("counter-view");
        assertThat(viewed.stream().filter(w -> w.counter.equals("c1")))
                .allSatisfy(w -> assertThat(w.kind).isEqualTo(RollupWrite.Kind.ROLLUP))
                .extracting(w -> w.counter + "=" + w.count + "@" + w.timeMicros)
                .containsExactlyInAnyOrderElementsOf(c1.stream()
                        .map(w -> w.counter + "=" + w.count + "@" + w.timeMicros)
                        .toList());
        List<RollupWrite> a1 =
                viewed.stream().filter(w -> w.counter.equals("a1")).toList();
        assertThat(a1).isNotEmpty().allSatisfy(w -> assertThat(w.kind).isEqualTo(RollupWrite.Kind.LIVE));
        assertThat(a1.get(a1.size() - 1).count).isEqualTo(7);
        assertThat(CollectSink.<RollupWrite>get("counter-rollups"))
                .noneSatisfy(w -> assertThat(w.kind).isEqualTo(RollupWrite.Kind.LIVE));
        assertThat(viewed.stream().filter(w -> w.counter.equals("c1")).toList().get(c1.size() - 1).lastWriteMicros)
                .isEqualTo((T0_MS + 18_000) * 1000);
        tally.v1.CounterRollup avro = last.toAvro();
        assertThat(avro.getCount()).isEqualTo(12);
        assertThat(avro.getNamespace()).isEqualTo("video_views");
        // the newest event's time goes with the rollup row, not in a write of its own
        assertThat(last.lastWriteMicros).isEqualTo((T0_MS + 18_000) * 1000);

        Map<Long, String> reasons = CollectSink.<DeadLetterRecord>get("counter-dead").stream()
                .collect(Collectors.toMap(d -> d.original.offset, d -> d.reason.name()));
        assertThat(reasons)
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        2L,
                        "IDEMPOTENCY_KEY_REUSE",
                        7L,
                        "OUTSIDE_ACCEPT_WINDOW",
                        8L,
                        "UNKNOWN_NAMESPACE",
                        9L,
                        "WRONG_NAMESPACE_KIND",
                        13L,
                        "UNDECODABLE"));
    }

    @Test
    void rollupTimersSitOnTheCoalesceGrid() throws Exception {
        var ns = io.tally.namespace.NamespaceCatalog.fromDirectory(java.nio.file.Path.of("../infra/namespaces"))
                .get("video_views")
                .orElseThrow();
        // accept 5 s + skew 500 ms, rounded up to the 1 s grid: every event of one second shares one timer
        assertThat(CounterRollupFunction.dueMillis(ns, T0_MS * 1000)).isEqualTo(T0_MS + 6000);
        assertThat(CounterRollupFunction.dueMillis(ns, T0_MS * 1000 + 499_000)).isEqualTo(T0_MS + 6000);
        assertThat(CounterRollupFunction.dueMillis(ns, T0_MS * 1000 + 500_000)).isEqualTo(T0_MS + 7000);
        long t = CounterRollupFunction.rollupMicros(ns, T0_MS + 6000);
        assertThat(t).isGreaterThan(T0_MS * 1000 + 499_000); // covers every event that shares the timer
    }
}
