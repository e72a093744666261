package io.tally.jobs.timeseries;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.cassandra.EventRow;
import io.tally.jobs.elasticsearch.IndexDoc;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.DeadLetterSerializer;
import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.testing.CollectSink;
import io.tally.jobs.testing.RecordingStorage;
import io.tally.jobs.testing.SeedControlPlane;
import io.tally.jobs.testing.StaticRegistry;
import io.tally.model.TallySchemas;
import io.tally.namespace.NamespaceChange;
import io.tally.serde.AvroSerde;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import tally.v1.DeadLetter;

class TimeSeriesWriterJobITCase {
    static final long NOW_MS = 1_795_000_000_000L;
    final AvroSerde serde = new AvroSerde(new StaticRegistry());

    RawRecord record(String ns, String tsid, long eventTimeMicros, String id, Map<String, String> items, long offset) {
        List<GenericRecord> its = new ArrayList<>();
        items.forEach((k, v) -> its.add(new GenericRecordBuilder(TallySchemas.EVENT_ITEM)
                .set("key", k)
                .set("value", ByteBuffer.wrap(v.getBytes(StandardCharsets.UTF_8)))
                .build()));
        GenericRecord e = new GenericRecordBuilder(TallySchemas.TIME_SERIES_EVENT)
                .set("namespace", ns)
                .set("time_series_id", tsid)
                .set("event_time", eventTimeMicros)
                .set("event_id", id)
                .set("items", its)
                .set("source", "test")
                .build();
        byte[] key = (ns + "/" + tsid).getBytes(StandardCharsets.UTF_8);
        return new RawRecord(
                "tally.timeseries.events", 0, offset, NOW_MS, key, serde.serialize("tally.timeseries.events", e));
    }

    @Test
    void storesPlansAndDeadLettersOnAMiniCluster() throws Exception {
        long t = NOW_MS * 1000 - 1_000_000; // one second before the record's timestamp
        List<RawRecord> input = List.of(
                record("playback", "p1", t, "e1", Map.of("deviceType", "ios", "title", "x"), 0),
                record("playback", "p1", t, "e2", Map.of(), 1),
                record("nope", "p1", t, "e3", Map.of(), 2),
                record("playback", "p1", t - 3_600_000_000L, "e4", Map.of(), 3),
                record("video_views", "p1", t, "e5", Map.of(), 4),
                new RawRecord("tally.timeseries.events", 0, 5, NOW_MS, null, new byte[] {9, 9, 9, 9, 9, 9}));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2);
        CollectSink<EventRow> rows = new CollectSink<>("rows");
        CollectSink<DeadLetterRecord> dead = new CollectSink<>("dead");
        CollectSink<IndexDoc> docs = new CollectSink<>("docs");
        TimeSeriesWriterJob.build(
                env.fromData(TypeInformation.of(RawRecord.class), input.toArray(new RawRecord[0]))
                        .map(SeedControlPlane.afterDelay(2000))
                        .returns(RawRecord.class)
                        .setParallelism(1),
                rows,
                docs,
                dead,
                SeedControlPlane.stream(env),
                StaticRegistry::new,
                0,
                null,
                RecordingStorage.branch("writer-1"));
        env.execute("test");
        // the provisioning branch ran with the job: the seed namespaces provisioned, the lifecycle ticked
        assertThat(RecordingStorage.calls("writer-1"))
                .contains("provision playback", "provision video_views")
                .anyMatch(c -> c.startsWith("lifecycle "));

        List<EventRow> stored = CollectSink.get("rows");
        assertThat(stored)
                .extracting(r -> r.eventId + ":" + r.itemKey)
                .containsExactlyInAnyOrder("e1:deviceType", "e1:title", "e2:");
        EventRow r = stored.stream()
                .filter(x -> x.itemKey.equals("deviceType"))
                .findFirst()
                .orElseThrow();
        assertThat(r.keyspace).isEqualTo("ns_playback");
        assertThat(r.table).startsWith("events_");
        assertThat(r.eventTimeMicros).isEqualTo(t);
        assertThat(new String(r.itemValue, StandardCharsets.UTF_8)).isEqualTo("ios");
        assertThat(r.timeBucket).isBetween(0, 23);
        assertThat(r.eventBucket).isBetween(0, 3);

        List<IndexDoc> indexed = CollectSink.get("docs");
        assertThat(indexed).extracting(d -> d.id).containsExactlyInAnyOrder("p1/" + t + "/e1", "p1/" + t + "/e2");
        IndexDoc d1 =
                indexed.stream().filter(d -> d.id.endsWith("/e1")).findFirst().orElseThrow();
        assertThat(d1.index).isEqualTo("tally-playback-" + r.table.substring("events_".length()));
        assertThat(d1.source)
                .containsEntry("deviceType", "ios")
                .containsEntry("event_id", "e1")
                .containsEntry("event_time", t / 1000)
                .doesNotContainKey("title"); // title is not in field_mapping

        Map<Long, String> reasons = CollectSink.<DeadLetterRecord>get("dead").stream()
                .collect(Collectors.toMap(d -> d.original.offset, d -> d.reason.name()));
        assertThat(reasons)
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        2L,
                        "UNKNOWN_NAMESPACE",
                        3L,
                        "OUTSIDE_ACCEPT_WINDOW",
                        4L,
                        "WRONG_NAMESPACE_KIND",
                        5L,
                        "UNDECODABLE"));
        DeadLetterRecord garbage = CollectSink.<DeadLetterRecord>get("dead").stream()
                .filter(d -> d.original.offset == 5)
                .findFirst()
                .orElseThrow();
        assertThat(garbage.message).contains("magic byte");
        assertThat(garbage.original.value).containsExactly(9, 9, 9, 9, 9, 9);
        DeadLetter avro = DeadLetterSerializer.toAvro(garbage);
        assertThat(avro.getReason()).isEqualTo("UNDECODABLE");
        assertThat(avro.getStage()).isEqualTo("timeseries-writer");
    }

    @Test
    void recordsOfANamespaceNotHeardOfYetWaitForItsChange() throws Exception {
        long t = NOW_MS * 1000 - 1_000_000;
        List<RawRecord> input =
                List.of(record("playback", "p9", t, "w1", Map.of(), 0), record("playback", "p9", t, "w2", Map.of(), 1));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2);
        CollectSink<EventRow> rows = new CollectSink<>("parked-rows");
        CollectSink<DeadLetterRecord> dead = new CollectSink<>("parked-dead");
        CollectSink<IndexDoc> docs = new CollectSink<>("parked-docs");
        // the data first, the control plane two seconds later: nothing is dead-lettered, all is stored
        TimeSeriesWriterJob.build(
                env.fromData(TypeInformation.of(RawRecord.class), input.toArray(new RawRecord[0]))
                        .setParallelism(1),
                rows,
                docs,
                dead,
                SeedControlPlane.stream(env)
                        .map(SeedControlPlane.afterDelay(2000))
                        .returns(io.tally.namespace.NamespaceChange.class)
                        .setParallelism(1),
                StaticRegistry::new,
                60_000,
                null,
                RecordingStorage.branch("writer-2"));
        env.execute("test");
        assertThat(CollectSink.<EventRow>get("parked-rows"))
                .extracting(r -> r.eventId)
                .containsExactlyInAnyOrder("w1", "w2");
        assertThat(CollectSink.<DeadLetterRecord>get("parked-dead")).isEmpty();
    }

    @Test
    void aRecordAcceptedUnderANewerConfigWaitsForIt() throws Exception {
        long t = NOW_MS * 1000 - 1_000_000;
        RawRecord r = record("playback", "p7", t, "v1", Map.of("deviceType", "tv", "title", "x"), 0);
        r.namespaceVersion = 5; // the gateway accepted it under version 5, which maps "title"
        NamespaceChange v5 = NamespaceChange.upsert(
                "playback",
                5,
                "{\"kind\":\"timeseries\",\"index\":{\"field_mapping\":"
                        + "{\"deviceType\":\"KEYWORD\",\"title\":\"KEYWORD\"}}}");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2);
        TimeSeriesWriterJob.build(
                env.fromData(TypeInformation.of(RawRecord.class), r).setParallelism(1),
                new CollectSink<>("v-rows"),
                new CollectSink<>("v-docs"),
                new CollectSink<>("v-dead"),
                SeedControlPlane.stream(env, v5)
                        .map(SeedControlPlane.afterDelay(1000))
                        .returns(NamespaceChange.class)
                        .setParallelism(1),
                StaticRegistry::new,
                60_000,
                null,
                RecordingStorage.branch("writer-3"));
        env.execute("test");
        assertThat(CollectSink.<IndexDoc>get("v-docs")).singleElement().satisfies(d -> assertThat(d.source)
                .containsEntry("title", "x"));
        assertThat(CollectSink.<DeadLetterRecord>get("v-dead")).isEmpty();
    }
}
