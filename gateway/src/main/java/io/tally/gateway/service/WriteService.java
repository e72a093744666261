package io.tally.gateway.service;

import io.tally.gateway.service.WriteBatch.Outgoing;
import io.tally.namespace.NamespaceConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Writes a validated batch to Kafka: the idempotency keys a client gave are claimed first (a key
 * seen recently, or twice in the request, with another payload is a CONFLICT and nothing is
 * written), then the records go to the sink. A durable write completes when Kafka acknowledged
 * every record (acks=all) within the sync timeout, a fire-and-forget one once the sink took them;
 * a write that fails releases its keys, so the client's retry with the same ids is taken.
 * Nothing unacknowledged is ever reported as written.
 */
public final class WriteService {
    /** How long past a namespace's accept window a claimed key is remembered. */
    static final long TOKEN_MARGIN_MS = 60_000;

    /** Where records go: the gateway's Kafka producer. */
    public interface RecordSink {
        /**
         * Sends the records; the future completes when all are acknowledged, with the timestamp
         * (ms) each was stored with: the one the jobs judge its accept window by.
         *
         * @throws Backpressure when the sink's buffer cannot take them now
         * @throws Unavailable when Kafka cannot take records at all
         */
        CompletableFuture<long[]> send(List<Outgoing> records);
    }

    /** The sink is full; retry later. */
    public static final class Backpressure extends RuntimeException {
        public Backpressure(String message) {
            super(message, null, false, false);
        }
    }

    /** The sink cannot reach Kafka. */
    public static final class Unavailable extends RuntimeException {
        public Unavailable(String message) {
            super(message, null, false, false);
        }
    }

    /** What the service counts (the gateway's Prometheus metrics). */
    public interface Metrics {
        void dedupHit();

        void accepted(String topic, int records);
    }

    /** Fails a pending acknowledgement with a {@link TimeoutException} once `ms` have passed. */
    public interface AckTimeout {
        void arm(CompletableFuture<long[]> acks, long ms);

        /** The JDK's: CompletableFuture.orTimeout, on its shared delayer thread. */
        AckTimeout DELAYER = (acks, ms) -> acks.orTimeout(ms, TimeUnit.MILLISECONDS);
    }

    /** A write that counts as done: acknowledged (durable) or handed to the sink. */
    public record Written(WriteBatch batch, boolean durable) {}

    private final RecordSink sink;
    private final IdempotencyCache tokens;
    private final BooleanSupplier kafkaUp;
    private final long syncTimeoutMs;
    private final Metrics metrics;
    private final AckTimeout ackTimeout;
    private volatile boolean draining;

    public WriteService(
            RecordSink sink, IdempotencyCache tokens, BooleanSupplier kafkaUp, long syncTimeoutMs, Metrics metrics) {
        this(sink, tokens, kafkaUp, syncTimeoutMs, metrics, AckTimeout.DELAYER);
    }

    public WriteService(
            RecordSink sink,
            IdempotencyCache tokens,
            BooleanSupplier kafkaUp,
            long syncTimeoutMs,
            Metrics metrics,
            AckTimeout ackTimeout) {
        this.sink = sink;
        this.tokens = tokens;
        this.kafkaUp = kafkaUp;
        this.syncTimeoutMs = syncTimeoutMs;
        this.metrics = metrics;
        this.ackTimeout = ackTimeout;
    }

    /** From now on, writes are refused (graceful shutdown). */
    public void drain() {
        draining = true;
    }

    public boolean draining() {
        return draining;
    }

    /** Refuses writes while draining: checked before a request is even read. */
    public void checkOpen() {
        if (draining) {
            throw ServiceException.unavailable(
                    ErrorCode.SHUTTING_DOWN, "the gateway is shutting down; retry on another instance");
        }
    }

    /**
     * @param durable wait for Kafka's acknowledgement (sync writes, EVENTUAL and ACCURATE counters)
     * @return completes with the write, or exceptionally with a {@link ServiceException}
     * @throws ServiceException when the write is refused before anything is sent
     */
    public CompletionStage<Written> write(WriteBatch batch, boolean durable, long nowMillis) {
        checkOpen();
        if (durable && !kafkaUp.getAsBoolean()) {
            throw ServiceException.unavailable(
                    ErrorCode.KAFKA_UNAVAILABLE, "Kafka is unreachable; nothing was written, retry with the same ids");
        }
        List<Long> claimed = claimIdempotencyKeys(batch, nowMillis);
        CompletableFuture<long[]> acks;
        try {
            acks = sink.send(batch.records());
        } catch (Backpressure e) {
            claimed.forEach(tokens::forget);
            throw new ServiceException(ErrorCode.BACKPRESSURE, e.getMessage() + retryUntil(batch), null)
                    .withEventIds(batch.eventIds());
        } catch (Unavailable e) {
            claimed.forEach(tokens::forget);
            throw ServiceException.unavailable(ErrorCode.KAFKA_UNAVAILABLE, e.getMessage() + retryUntil(batch))
                    .withEventIds(batch.eventIds());
        }
        metrics.accepted(batch.records().get(0).topic(), batch.records().size());
        Written written = new Written(batch, durable);
        if (!durable) {
            return CompletableFuture.completedFuture(written);
        }
        long timeoutMs = syncTimeoutMs(batch);
        ackTimeout.arm(acks, timeoutMs);
        return acks.handle((stored, err) -> {
            if (err == null) {
                refuseOutsideWindow(batch, stored); // the jobs' judgement, made on the same clock
                return written;
            }
            claimed.forEach(tokens::forget);
            throw unacknowledged(err, timeoutMs, batch).withEventIds(batch.eventIds());
        });
    }

    /**
     * How long a durable write waits for Kafka: the setting, but at most half the namespace's
     * accept window, so a client told 503 still has the other half to retry with the same ids
     * (the retry's event time is the first attempt's).
     */
    long syncTimeoutMs(WriteBatch batch) {
        return Math.max(
                1, Math.min(syncTimeoutMs, batch.namespace().acceptLimit().toMillis() / 2));
    }

    /**
     * The jobs judge an event's accept window against the timestamp Kafka stored it with (a
     * time-series event's with the store grace); the gateway judged it against its own clock before sending. A record stored after its window
     * closed would be dead-lettered, so the write is not reported as done: it is refused as the
     * jobs will refuse it, never answered 200 first.
     */
    private static void refuseOutsideWindow(WriteBatch batch, long[] storedMillis) {
        for (int i = 0; i < batch.records().size() && storedMillis != null && i < storedMillis.length; i++) {
            Outgoing o = batch.records().get(i);
            NamespaceConfig ns = batch.namespace();
            long stored = storedMillis[i] * 1000;
            if (ns.isCounter() ? !ns.accepts(o.eventTimeMicros(), stored) : !ns.storable(o.eventTimeMicros(), stored)) {
                throw new ServiceException(
                                ErrorCode.OUTSIDE_ACCEPT_WINDOW,
                                o.timeField() + " was outside the accept window of '"
                                        + batch.namespace().name()
                                        + "' by the time Kafka stored it (" + storedMillis[i]
                                        + " ms): it will be dead-lettered, not applied; send it again with a"
                                        + " current time",
                                o.timeField())
                        .withEventIds(batch.eventIds());
            }
        }
    }

    /** When a retry with the same ids stops being accepted: the first event's time plus the window. */
    private static String retryUntil(WriteBatch batch) {
        long first = batch.records().stream()
                .mapToLong(Outgoing::eventTimeMicros)
                .min()
                .orElse(0);
        long until = first + batch.namespace().acceptLimit().toNanos() / 1000;
        return "; retry with the same ids before " + java.time.Instant.EPOCH.plusNanos(until * 1000)
                + " (the accept window of its event time)";
    }

    private ServiceException unacknowledged(Throwable err, long timeoutMs, WriteBatch batch) {
        Throwable cause = Failures.unwrap(err);
        if (cause instanceof ServiceException refused) {
            return refused;
        }
        if (cause instanceof Backpressure) {
            return new ServiceException(ErrorCode.BACKPRESSURE, cause.getMessage() + retryUntil(batch), null);
        }
        String why = cause instanceof TimeoutException
                ? "Kafka did not acknowledge within " + timeoutMs + " ms"
                : "Kafka did not acknowledge: " + cause.getMessage();
        return ServiceException.unavailable(
                ErrorCode.KAFKA_UNAVAILABLE, why + retryUntil(batch) + " (writes are idempotent)");
    }

    /**
     * A CONFLICT when a client-given idempotency key comes back with another payload (in this
     * request or recently); remembers the new keys and returns them (forgotten again if the write fails).
     */
    private List<Long> claimIdempotencyKeys(WriteBatch batch, long nowMillis) {
        Map<Long, Long> inRequest = new HashMap<>();
        Set<Integer> generated = new HashSet<>(batch.generatedIds());
        List<Long> fresh = new ArrayList<>();
        long expires = nowMillis + batch.namespace().acceptLimit().toMillis() + TOKEN_MARGIN_MS;
        boolean counter = batch.namespace().isCounter();
        for (int i = 0; i < batch.records().size(); i++) {
            if (generated.contains(i)) {
                continue; // ids the gateway made are new by construction
            }
            Outgoing o = batch.records().get(i);
            Long prior = inRequest.putIfAbsent(o.idempotencyKey(), o.payloadDigest());
            IdempotencyCache.Verdict v = prior != null
                    ? (prior == o.payloadDigest()
                            ? IdempotencyCache.Verdict.SAME_PAYLOAD
                            : IdempotencyCache.Verdict.DIFFERENT_PAYLOAD)
                    : tokens.checkAndRemember(o.idempotencyKey(), o.payloadDigest(), nowMillis, expires);
            if (v == IdempotencyCache.Verdict.DIFFERENT_PAYLOAD) {
                fresh.forEach(tokens::forget);
                String field = counter ? "idempotency_token.token" : "events[" + i + "].eventId";
                throw new ServiceException(
                        ErrorCode.IDEMPOTENCY_KEY_REUSE,
                        "the idempotency key of " + field + " was already used with a different payload",
                        field);
            }
            if (v == IdempotencyCache.Verdict.NEW) {
                fresh.add(o.idempotencyKey());
            } else {
                metrics.dedupHit();
            }
        }
        return fresh;
    }
}
