package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.gateway.service.ServiceException.Kind;
import io.tally.gateway.service.WriteBatch.Outgoing;
import io.tally.model.AcceptWindow;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfigParser;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** The write path's rules on a recording sink: claims, conflicts, what a failure releases. */
class WriteServiceTest {
    static final NamespaceConfig PLAYBACK = NamespaceConfigParser.parse("playback", "{\"kind\":\"timeseries\"}");
    static final long NOW = 1_795_000_000_000L;

    /** A sink that records what it was sent and answers with a future the test completes. */
    static final class RecordingSink implements WriteService.RecordSink {
        final List<Outgoing> sent = new ArrayList<>();
        CompletableFuture<long[]> acks = new CompletableFuture<>();
        RuntimeException refuse;

        @Override
        public CompletableFuture<long[]> send(List<Outgoing> records) {
            if (refuse != null) {
                throw refuse;
            }
            sent.addAll(records);
            return acks;
        }
    }

    static final class Counts implements WriteService.Metrics {
        int dedupHits;
        int accepted;

        @Override
        public void dedupHit() {
            dedupHits++;
        }

        @Override
        public void accepted(String topic, int records) {
            accepted += records;
        }
    }

    final RecordingSink sink = new RecordingSink();
    final Counts counts = new Counts();
    boolean kafkaUp = true;
    final WriteService service = new WriteService(sink, new IdempotencyCache(1000), () -> kafkaUp, 5_000, counts);

    static WriteBatch batch(long... keyAndDigest) {
        List<Outgoing> out = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < keyAndDigest.length; i += 2) {
            out.add(new Outgoing(
                    "tally.timeseries.events",
                    "playback/a",
                    null,
                    keyAndDigest[i],
                    keyAndDigest[i + 1],
                    1,
                    1,
                    NOW * 1000,
                    "events[" + i / 2 + "].eventTime"));
            ids.add("e" + i);
        }
        return new WriteBatch(PLAYBACK, out, ids, List.of());
    }

    @Test
    void aDurableWriteCompletesOnlyWhenKafkaAcknowledged() throws Exception {
        var done = service.write(batch(1, 10), true, NOW).toCompletableFuture();
        assertThat(done).isNotDone();
        sink.acks.complete(new long[] {NOW});
        assertThat(done.get().durable()).isTrue();
        assertThat(counts.accepted).isEqualTo(1);
    }

    @Test
    void aFireAndForgetWriteCompletesOnceTheSinkTookIt() {
        assertThat(service.write(batch(1, 10), false, NOW).toCompletableFuture())
                .isCompleted();
    }

    @Test
    void aRetryIsTakenAndAReuseWithAnotherPayloadIsAConflict() {
        service.write(batch(1, 10), false, NOW);
        service.write(batch(1, 10), false, NOW + 1); // the same request again: one logical event
        assertThat(counts.dedupHits).isEqualTo(1);
        assertThatThrownBy(() -> service.write(batch(1, 11), false, NOW + 2))
                .isInstanceOfSatisfying(ServiceException.class, e -> {
                    assertThat(e.kind()).isEqualTo(Kind.CONFLICT);
                    assertThat(e.code()).isEqualTo("IDEMPOTENCY_KEY_REUSE");
                    assertThat(e.field()).isEqualTo("events[0].eventId");
                });
        assertThat(sink.sent).hasSize(2);
    }

    @Test
    void aKeyTwiceInOneRequestWithAnotherPayloadWritesNothing() {
        assertThatThrownBy(() -> service.write(batch(1, 10, 2, 20, 1, 11), false, NOW))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.field()).isEqualTo("events[2].eventId"));
        assertThat(sink.sent).isEmpty();
        service.write(batch(2, 21), false, NOW); // the keys claimed before the conflict were released
        assertThat(sink.sent).hasSize(1);
    }

    @Test
    void aWriteKafkaDidNotAcknowledgeReleasesItsKeysForTheRetry() {
        var first = service.write(batch(1, 10), true, NOW).toCompletableFuture();
        sink.acks.completeExceptionally(new RuntimeException("broker gone"));
        assertThatThrownBy(first::get)
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOfSatisfying(ServiceException.class, e -> {
                    assertThat(e.kind()).isEqualTo(Kind.UNAVAILABLE);
                    assertThat(e.getMessage()).contains("broker gone").contains("retry with the same ids");
                });
        sink.acks = new CompletableFuture<>();
        service.write(batch(1, 12), true, NOW + 1); // not a conflict: the failed write claimed nothing
        assertThat(sink.sent).hasSize(2);
    }

    @Test
    void aFullSinkIsBackpressureAndReleasesTheKeys() {
        sink.refuse = new WriteService.Backpressure("the producer buffer is full");
        assertThatThrownBy(() -> service.write(batch(1, 10), true, NOW))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.kind()).isEqualTo(Kind.BACKPRESSURE));
        sink.refuse = null;
        service.write(batch(1, 11), true, NOW);
        assertThat(sink.sent).hasSize(1);
    }

    @Test
    void aDurableWriteIsRefusedUpFrontWhileKafkaIsDownAndAnyWriteWhileDraining() {
        kafkaUp = false;
        assertThatThrownBy(() -> service.write(batch(1, 10), true, NOW))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.code()).isEqualTo("KAFKA_UNAVAILABLE"));
        kafkaUp = true;
        service.drain();
        assertThatThrownBy(() -> service.write(batch(2, 20), false, NOW))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.code()).isEqualTo("SHUTTING_DOWN"));
        assertThat(sink.sent).isEmpty();
    }

    @Test
    void aWriteKafkaStoredAfterItsWindowClosedIsRefusedNotAnswered200() throws Exception {
        // the writer judges the window against the stored timestamp, with the store grace: a
        // time-series event appended later than its 5 s window plus the grace is a dead letter
        var done = service.write(batch(1, 10), true, NOW).toCompletableFuture();
        sink.acks.complete(new long[] {NOW + 5_001 + AcceptWindow.STORE_GRACE.toMillis()});
        assertThatThrownBy(done::get)
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOfSatisfying(ServiceException.class, e -> {
                    assertThat(e.code()).isEqualTo("OUTSIDE_ACCEPT_WINDOW");
                    assertThat(e.field()).isEqualTo("events[0].eventTime");
                    assertThat(e.eventIds()).containsExactly("e0");
                });
    }

    @Test
    void aTimeSeriesWriteKafkaStoredWithinTheStoreGraceIsAnswered() throws Exception {
        var done = service.write(batch(1, 10), true, NOW).toCompletableFuture();
        sink.acks.complete(new long[] {NOW + 6_000 + AcceptWindow.STORE_GRACE.toMillis() - 2_000});
        assertThat(done.get().batch().eventIds()).containsExactly("e0");
    }

    @Test
    void refusalsAfterTheRequestWasReadCarryItsEventIdsAndTheRetryDeadline() {
        sink.refuse = new WriteService.Backpressure("the producer buffer is full");
        assertThatThrownBy(() -> service.write(batch(1, 10, 2, 20), true, NOW))
                .isInstanceOfSatisfying(ServiceException.class, e -> {
                    assertThat(e.eventIds()).containsExactly("e0", "e2");
                    assertThat(e.getMessage()).contains("retry with the same ids before");
                });
    }

    @Test
    void theSyncTimeoutLeavesHalfTheAcceptWindowForARetry() {
        assertThat(service.syncTimeoutMs(batch(1, 10))).isEqualTo(2_500); // playback's default 5 s window
    }
}
