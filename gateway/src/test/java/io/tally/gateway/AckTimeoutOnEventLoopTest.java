package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.gateway.service.IdempotencyCache;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.WriteBatch;
import io.tally.gateway.service.WriteBatch.Outgoing;
import io.tally.gateway.service.WriteService;
import io.tally.namespace.NamespaceConfigParser;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A durable write Kafka never acknowledges is answered 503 when the event loop's timer fires. */
class AckTimeoutOnEventLoopTest {
    final Vertx vertx = Vertx.vertx();
    final List<CompletableFuture<long[]>> acks = new java.util.concurrent.CopyOnWriteArrayList<>();
    final WriteService service = new WriteService(
            records -> {
                CompletableFuture<long[]> f = new CompletableFuture<>();
                acks.add(f);
                return f;
            },
            new IdempotencyCache(100),
            () -> true,
            200,
            new WriteService.Metrics() {
                @Override
                public void dedupHit() {}

                @Override
                public void accepted(String topic, int records) {}
            },
            GatewayMain.ackTimeoutOn(vertx));

    @AfterEach
    void close() {
        vertx.close();
    }

    static WriteBatch batch(String id) {
        long now = System.currentTimeMillis();
        Outgoing o = new Outgoing(
                "tally.timeseries.events",
                "playback/a",
                null,
                id.hashCode(),
                1,
                1,
                1,
                now * 1000,
                "events[0].eventTime");
        return new WriteBatch(
                NamespaceConfigParser.parse("playback", "{\"kind\":\"timeseries\"}"),
                List.of(o),
                List.of(id),
                List.of());
    }

    CompletableFuture<WriteService.Written> writeOnTheEventLoop(String id) {
        CompletableFuture<WriteService.Written> out = new CompletableFuture<>();
        vertx.runOnContext(
                v -> service.write(batch(id), true, System.currentTimeMillis()).whenComplete((w, e) -> {
                    if (e != null) {
                        out.completeExceptionally(e);
                    } else {
                        out.complete(w);
                    }
                }));
        return out;
    }

    static ServiceException failure(CompletableFuture<?> f) {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c =
                    e.getCause() instanceof CompletionException ? e.getCause().getCause() : e.getCause();
            return (ServiceException) c;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("the write did not fail");
    }

    @Test
    void anUnacknowledgedWriteTimesOutOnTheEventLoopsTimer() {
        ServiceException e = failure(writeOnTheEventLoop("e1"));
        assertThat(e.code()).isEqualTo("KAFKA_UNAVAILABLE");
        assertThat(e.getMessage()).contains("did not acknowledge within 200 ms");
    }

    @Test
    void anAcknowledgedWriteIsDoneAndItsTimerFiresOnNothing() throws Exception {
        CompletableFuture<WriteService.Written> w = writeOnTheEventLoop("e2");
        while (acks.isEmpty()) {
            Thread.sleep(5);
        }
        acks.get(0).complete(new long[] {System.currentTimeMillis()});
        assertThat(w.get(5, TimeUnit.SECONDS).durable()).isTrue();
        Thread.sleep(400); // past the deadline: the answered write stays answered
        assertThat(acks.get(0).isCompletedExceptionally()).isFalse();
    }

    @Test
    void offTheEventLoopTheJdksDelayerKeepsTheDeadline() {
        CompletableFuture<WriteService.Written> w =
                service.write(batch("e3"), true, System.currentTimeMillis()).toCompletableFuture();
        assertThat(failure(w).code()).isEqualTo("KAFKA_UNAVAILABLE");
    }
}
