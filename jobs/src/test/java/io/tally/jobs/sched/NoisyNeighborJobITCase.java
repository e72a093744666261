package io.tally.jobs.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.kafka.AvroRecordSerializer.Keyed;
import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.testing.CollectSink;
import io.tally.jobs.testing.StaticRegistry;
import io.tally.model.TallySchemas;
import io.tally.serde.AvroSerde;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;

/**
 * The job on a MiniCluster with the exporter's record shapes: 40 quiet seconds for both
 * containers, then "victim" waits long while "noisy" preempts it, and "greedy" waits long
 * while preempted by its own tasks (its own quota), and "sleeper", which sleeps between short
 * bursts, is never preempted but its wake-ups wait behind noisy's tasks. The victim and the sleeper
 * are alerted, then resolved; greedy is not.
 */
class NoisyNeighborJobITCase {
    static final long T0 = 1_795_000_000_000L;
    final AvroSerde serde = new AvroSerde(new StaticRegistry());
    final List<RawRecord> input = new ArrayList<>();

    static GenericRecord item(String key, String value) {
        return new GenericRecordBuilder(TallySchemas.EVENT_ITEM)
                .set("key", key)
                .set("value", ByteBuffer.wrap(value.getBytes(StandardCharsets.UTF_8)))
                .build();
    }

    /** A sample; `cause` is who held the CPU when the wait ended (null: the source cannot tell). */
    void runq(String container, long atMs, long latencyUs, String cause) {
        List<GenericRecord> items = new ArrayList<>(List.of(item("runq_lat_us", Long.toString(latencyUs))));
        if (cause != null) {
            items.add(item("cause", cause));
        }
        GenericRecord e = new GenericRecordBuilder(TallySchemas.TIME_SERIES_EVENT)
                .set("namespace", "sched.runq")
                .set("time_series_id", "h1/" + container)
                .set("event_time", atMs * 1000)
                .set("event_id", container + atMs)
                .set("items", items)
                .set("source", "test")
                .build();
        add("sched.runq/h1/" + container, serde.serialize("tally.timeseries.events", e), atMs);
    }

    void switchOuts(String container, String cause, long atMs, long n) {
        GenericRecord e = new GenericRecordBuilder(TallySchemas.COUNTER_EVENT)
                .set("namespace", "sched.switchout")
                .set("counter", "h1/" + container + "/" + cause)
                .set(
                        "op",
                        new GenericData.EnumSymbol(
                                TallySchemas.COUNTER_EVENT.getField("op").schema(), "ADD"))
                .set("delta", n)
                .set("event_time", atMs * 1000)
                .set("event_id", "x" + atMs)
                .set("source", "test")
                .build();
        add("sched.switchout/h1/" + container + "/" + cause, serde.serialize("tally.counter.events", e), atMs);
    }

    void add(String key, byte[] value, long atMs) {
        input.add(new RawRecord("t", 0, input.size(), atMs, key.getBytes(StandardCharsets.UTF_8), value));
    }

    @Test
    void alertsTheVictimOfANeighborButNotAContainerThrottledByItself() throws Exception {
        for (long s = 0; s < 80; s++) {
            long at = T0 + s * 1000;
            boolean incident = s >= 40 && s < 60;
            for (int i = 0; i < 10; i++) {
                runq("victim", at + i * 100, incident ? 20_000 : 200, null);
                runq("greedy", at + i * 100, incident ? 20_000 : 200, incident ? "same_container" : "system");
                runq("sleeper", at + i * 100, incident ? 20_000 : 200, incident ? "other_container" : "system");
            }
            switchOuts("victim", "other_container", at + 999, incident ? 200 : 2);
            switchOuts("victim", "same_container", at + 999, 2);
            switchOuts("greedy", "same_container", at + 999, incident ? 200 : 2);
            switchOuts("greedy", "other_container", at + 999, 2);
        }
        input.add(
                new RawRecord("t", 0, input.size(), T0, "playback/x".getBytes(StandardCharsets.UTF_8), new byte[] {0}));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1);
        CollectSink<AlertRecord> alerts = new CollectSink<>("nn-alerts");
        CollectSink<SchedEvent> events = new CollectSink<>("nn-events");
        NoisyNeighborJob.build(
                env.fromData(TypeInformation.of(RawRecord.class), input.toArray(new RawRecord[0])),
                alerts,
                events,
                StaticRegistry::new,
                Duration.ofSeconds(10),
                Duration.ofSeconds(5),
                NoisyNeighborRule.defaults(),
                new AlertHoldDown(Duration.ofSeconds(5), Duration.ofSeconds(5)),
                Duration.ofHours(1));
        env.execute("test");

        List<AlertRecord> got = CollectSink.get("nn-alerts");
        assertThat(got)
                .filteredOn(a -> a.window.container.equals("victim"))
                .extracting(a -> a.state)
                .containsExactly("FIRING", "RESOLVED");
        assertThat(got)
                .filteredOn(a -> !a.window.container.equals("victim"))
                .extracting(a -> a.window.container + ":" + a.state)
                .containsExactly("sleeper:FIRING", "sleeper:RESOLVED");
        AlertRecord sleeper = got.stream()
                .filter(a -> a.window.container.equals("sleeper"))
                .findFirst()
                .orElseThrow();
        assertThat(sleeper.window.otherContainer).isZero();
        assertThat(sleeper.window.waitOtherUs).isGreaterThan(sleeper.window.waitSameUs);
        assertThat(NoisyNeighborJob.alert(sleeper).value().get("runq_wait_behind_other_container_us"))
                .isEqualTo(sleeper.window.waitOtherUs);
        AlertRecord firing = got.stream()
                .filter(a -> a.window.container.equals("victim"))
                .findFirst()
                .orElseThrow();
        assertThat(firing.window.p99Us).isGreaterThanOrEqualTo(19_000);
        assertThat(firing.baselineP99Us).isBetween(150L, 250L);
        assertThat(firing.window.otherContainer).isGreaterThan(firing.window.sameContainer);
        assertThat(firing.reason).contains("other containers");
        GenericRecord avro = NoisyNeighborJob.alert(firing).value();
        assertThat(avro.get("container").toString()).isEqualTo("victim");
        assertThat(avro.get("state").toString()).isEqualTo("FIRING");

        List<Keyed> stored = CollectSink.<SchedEvent>get("nn-events").stream()
                .map(NoisyNeighborJob::timeSeriesEvent)
                .toList();
        assertThat(stored).anySatisfy(k -> assertThat(k.key()).isEqualTo("sched.summary/h1/greedy"));
        assertThat(stored).filteredOn(k -> k.key().startsWith("sched.alerts/")).hasSize(4);
        serde.serialize("tally.timeseries.events", stored.get(0).value()); // encodes against the real schema
    }
}
