package io.tally.jobs.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.counter.CounterEventDecoder;
import io.tally.jobs.counter.CounterMutation;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.testing.StaticRegistry;
import io.tally.model.DeadLetterReason;
import io.tally.model.Micros;
import io.tally.model.Topics;
import io.tally.namespace.NamespaceChange;
import io.tally.serde.AvroSerde;
import java.nio.charset.StandardCharsets;
import org.apache.flink.streaming.api.operators.co.CoBroadcastWithNonKeyedOperator;
import org.apache.flink.streaming.util.BroadcastOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tally.v1.CounterEvent;
import tally.v1.CounterOp;

/** Parking, expiry and the version wait of the decode step, on Flink's broadcast operator harness. */
class NamespacedDecoderTest {
    static final long NOW_MS = 1_795_000_000_000L;
    static final String COUNTER = "{\"kind\":\"counter\",\"counter_type\":\"EVENTUAL\",\"accept_limit\":\"5s\"}";
    static final long GRACE_MS = 10_000;
    final AvroSerde serde = new AvroSerde(new StaticRegistry());
    BroadcastOperatorTestHarness<RawRecord, NamespaceChange, CounterMutation> h;

    @BeforeEach
    void open() throws Exception {
        h = ProcessFunctionTestHarnesses.forBroadcastProcessFunction(
                new CounterEventDecoder(StaticRegistry::new, GRACE_MS), ControlPlane.NAMESPACES);
        h.setProcessingTime(NOW_MS);
    }

    @AfterEach
    void close() throws Exception {
        h.close();
    }

    RawRecord record(String namespace, String id, long version) {
        return record(namespace, "c1", id, version);
    }

    RawRecord record(String namespace, String counter, String id, long version) {
        CounterEvent e = new CounterEvent(
                namespace, counter, CounterOp.ADD, 1L, Micros.toInstant((NOW_MS - 1_000) * 1000), id, "test");
        RawRecord r = new RawRecord(
                Topics.COUNTER_EVENTS,
                0,
                0,
                NOW_MS,
                (namespace + "/c1").getBytes(StandardCharsets.UTF_8),
                serde.serialize(Topics.COUNTER_EVENTS, e));
        r.namespaceVersion = version;
        return r;
    }

    DeadLetterReason[] deadLetters() {
        var out = h.getSideOutput(CounterEventDecoder.DEAD_LETTERS);
        return out == null
                ? new DeadLetterReason[0]
                : out.stream()
                        .map(r -> ((DeadLetterRecord) r.getValue()).reason)
                        .toArray(DeadLetterReason[]::new);
    }

    @Test
    void aRecordOfANamespaceNotHeardOfYetWaitsForIt() throws Exception {
        h.processElement(record("fresh", "e1", 0), NOW_MS);
        assertThat(h.extractOutputValues()).isEmpty();
        h.processBroadcastElement(NamespaceChange.upsert("fresh", 1, COUNTER), NOW_MS);
        assertThat(h.extractOutputValues()).extracting(m -> m.eventId).containsExactly("e1");
        assertThat(deadLetters()).isEmpty();
    }

    @Test
    void afterTheGraceItIsAnUnknownNamespace() throws Exception {
        h.processElement(record("never", "e1", 0), NOW_MS);
        h.setProcessingTime(NOW_MS + GRACE_MS - 1);
        h.processBroadcastElement(NamespaceChange.tick(), NOW_MS);
        assertThat(deadLetters()).isEmpty();
        h.setProcessingTime(NOW_MS + GRACE_MS);
        h.processBroadcastElement(NamespaceChange.tick(), NOW_MS); // decided on the control stream's tick
        assertThat(deadLetters()).containsExactly(DeadLetterReason.UNKNOWN_NAMESPACE);
        assertThat(h.extractOutputValues()).isEmpty();
    }

    @Test
    void aRecordAcceptedUnderANewerVersionWaitsForThatVersion() throws Exception {
        h.processBroadcastElement(NamespaceChange.upsert("ns", 1, COUNTER), NOW_MS);
        h.processElement(record("ns", "e1", 2), NOW_MS);
        assertThat(h.extractOutputValues()).isEmpty();
        h.processBroadcastElement(NamespaceChange.upsert("ns", 2, COUNTER.replace("\"5s\"", "\"9s\"")), NOW_MS);
        assertThat(h.extractOutputValues()).singleElement().satisfies(m -> assertThat(m.acceptLimitMs)
                .isEqualTo(9_000));
    }

    @Test
    void aKeyCassandraWouldRefuseIsADeadLetterAndTheNextRecordGoesOn() throws Exception {
        h.processBroadcastElement(NamespaceChange.upsert("ns", 1, COUNTER), NOW_MS);
        h.processElement(record("ns", "c".repeat(70_000), "e1", 0), NOW_MS); // straight to Kafka: no gateway limit
        h.processElement(record("ns", "e2", 0), NOW_MS);
        assertThat(deadLetters()).containsExactly(DeadLetterReason.ROW_REJECTED);
        assertThat(h.extractOutputValues()).extracting(m -> m.eventId).containsExactly("e2");
    }

    @Test
    void aDeletedNamespaceIsNotWaitedFor() throws Exception {
        h.processBroadcastElement(new NamespaceChange("gone", 3, null, true), NOW_MS);
        h.processElement(record("gone", "e1", 0), NOW_MS);
        assertThat(deadLetters()).containsExactly(DeadLetterReason.UNKNOWN_NAMESPACE);
    }

    static NamespaceChange created(String name, long version, long createdMicros, boolean deleted) {
        NamespaceChange c = new NamespaceChange(name, version, COUNTER, deleted);
        c.createdMicros = createdMicros;
        return c;
    }

    RawRecord recordOf(String namespace, String id, long createdMicros) {
        RawRecord r = record(namespace, id, 1); // versions start at 1 again: only the creation tells them apart
        r.namespaceCreatedMicros = createdMicros;
        return r;
    }

    @Test
    void aRecordOfANamespaceCreatedAgainWaitsForItWhereTheNameIsKnownDeleted() throws Exception {
        h.processBroadcastElement(created("ns", 1, 100, false), NOW_MS);
        h.processBroadcastElement(created("ns", 1, 100, true), NOW_MS);
        h.processElement(recordOf("ns", "e1", 200), NOW_MS); // the gateway heard of the new one first
        assertThat(h.extractOutputValues()).isEmpty();
        assertThat(deadLetters()).isEmpty();
        h.processBroadcastElement(created("ns", 1, 200, false), NOW_MS);
        assertThat(h.extractOutputValues()).singleElement().satisfies(m -> {
            assertThat(m.eventId).isEqualTo("e1");
            assertThat(m.namespaceCreatedMicros).isEqualTo(200);
        });
        assertThat(deadLetters()).isEmpty();
    }

    @Test
    void aRecordOfANamespaceCreatedAgainWaitsWhileTheOldOneIsStillLiveHere() throws Exception {
        h.processBroadcastElement(created("ns", 1, 100, false), NOW_MS);
        h.processElement(recordOf("ns", "e1", 200), NOW_MS); // neither the delete nor the create here yet
        assertThat(h.extractOutputValues()).isEmpty();
        h.processBroadcastElement(created("ns", 1, 100, true), NOW_MS);
        assertThat(deadLetters()).isEmpty();
        h.processBroadcastElement(created("ns", 1, 200, false), NOW_MS);
        assertThat(h.extractOutputValues()).extracting(m -> m.eventId).containsExactly("e1");
    }

    @Test
    void aRecordOfALaterCreationThatNeverArrivesIsADeadLetterNotAnEventOfTheOldNamespace() throws Exception {
        h.processBroadcastElement(created("ns", 1, 100, false), NOW_MS);
        h.processElement(recordOf("ns", "e1", 200), NOW_MS);
        h.setProcessingTime(NOW_MS + GRACE_MS);
        h.processBroadcastElement(NamespaceChange.tick(), NOW_MS);
        assertThat(deadLetters()).containsExactly(DeadLetterReason.UNKNOWN_NAMESPACE);
        assertThat(h.extractOutputValues()).isEmpty();
    }

    @Test
    void aLateRecordOfADeletedNamespaceIsADeadLetterOnceTheNameIsAnothers() throws Exception {
        h.processBroadcastElement(created("ns", 1, 200, false), NOW_MS);
        h.processElement(recordOf("ns", "old", 100), NOW_MS);
        h.processElement(recordOf("ns", "new", 200), NOW_MS);
        h.processElement(recordOf("ns", "direct", 0), NOW_MS); // no header: a direct producer, the config at hand
        assertThat(deadLetters()).containsExactly(DeadLetterReason.UNKNOWN_NAMESPACE);
        assertThat(h.extractOutputValues()).extracting(m -> m.eventId).containsExactly("new", "direct");
    }

    @Test
    void parkedRecordsSurviveASnapshot() throws Exception {
        h.processElement(record("later", "e1", 0), NOW_MS);
        var snapshot = h.snapshot(1, NOW_MS);
        h.close();
        h = new BroadcastOperatorTestHarness<>(
                new CoBroadcastWithNonKeyedOperator<>(
                        new CounterEventDecoder(StaticRegistry::new, GRACE_MS),
                        java.util.List.of(ControlPlane.NAMESPACES)),
                1,
                1,
                0);
        h.setup();
        h.initializeState(snapshot);
        h.open();
        h.setProcessingTime(NOW_MS);
        h.processBroadcastElement(NamespaceChange.upsert("later", 1, COUNTER), NOW_MS);
        assertThat(h.extractOutputValues()).extracting(m -> m.eventId).containsExactly("e1");
    }

    /** A registry that cannot be reached. */
    static final class DownRegistry implements io.tally.serde.SchemaRegistryClient {
        @Override
        public int register(String subject, org.apache.avro.Schema schema) {
            throw down();
        }

        @Override
        public org.apache.avro.Schema schemaById(int id) {
            throw down();
        }

        @Override
        public int lookup(String subject, org.apache.avro.Schema schema) {
            throw down();
        }

        private static io.tally.serde.RegistryUnavailableException down() {
            return new io.tally.serde.RegistryUnavailableException("schema registry is unreachable", null);
        }
    }

    @Test
    void aRecordThatCannotBeDecodedBecauseTheRegistryIsDownIsRetriedNotDeadLettered() throws Exception {
        RawRecord r = record("video_views", "e1", 0); // encoded while the registry was up
        h.close();
        h = ProcessFunctionTestHarnesses.forBroadcastProcessFunction(
                new CounterEventDecoder(DownRegistry::new, GRACE_MS), ControlPlane.NAMESPACES);
        h.setProcessingTime(NOW_MS);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> h.processElement(r, NOW_MS))
                .isInstanceOf(io.tally.serde.RegistryUnavailableException.class);
        assertThat(deadLetters()).isEmpty();
    }
}
