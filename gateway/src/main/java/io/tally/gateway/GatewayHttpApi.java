package io.tally.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.WriteBatch.Outgoing;
import io.tally.model.Micros;
import io.tally.namespace.CounterFold;
import io.tally.serde.SerdeException;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tally.v1.CounterEvent;

/** The gateway's HTTP endpoints (shared DESIGN.md, "Gateway API"). */
final class GatewayHttpApi {
    private static final Logger LOG = LoggerFactory.getLogger(GatewayHttpApi.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long TOKEN_MARGIN_MS = 60_000;

    private final WriteRequestParser parser;
    private final EventReader reader;
    private final EventSearch search;
    private final CounterReader counters;
    private final EventProducer producer;
    private final IdempotencyCache tokens;
    private final KafkaHealth kafka;
    private final GatewayMetrics metrics;
    private final long syncTimeoutMs;
    private final int maxBodyBytes;
    private final NamespaceAdminApi admin;
    private final ControlPlaneHealth control;
    private volatile boolean draining;

    GatewayHttpApi(
            WriteRequestParser parser,
            EventReader reader,
            EventSearch search,
            CounterReader counters,
            EventProducer producer,
            IdempotencyCache tokens,
            KafkaHealth kafka,
            GatewayMetrics metrics,
            GatewayConfig config,
            NamespaceAdminApi admin,
            ControlPlaneHealth control) {
        this.admin = admin;
        this.control = control;
        this.parser = parser;
        this.reader = reader;
        this.search = search;
        this.counters = counters;
        this.producer = producer;
        this.tokens = tokens;
        this.kafka = kafka;
        this.metrics = metrics;
        this.syncTimeoutMs = config.longOf(GatewayConfig.SYNC_TIMEOUT_MS);
        this.maxBodyBytes = config.intOf(GatewayConfig.MAX_BODY);
    }

    /** From now on, writes are refused with 503 and /healthz says so (graceful shutdown). */
    void drain() {
        draining = true;
    }

    Router router(Vertx vertx) {
        Router r = Router.router(vertx);
        r.route().handler(this::timeRequest);
        r.route().handler(BodyHandler.create().setBodyLimit(maxBodyBytes).setHandleFileUploads(false));
        write(r, "/v1/counter/AddCount", (body, now) -> parser.counter(body, false, now), Mode.BY_COUNTER_TYPE);
        write(r, "/v1/counter/ClearCount", (body, now) -> parser.counter(body, true, now), Mode.BY_COUNTER_TYPE);
        write(
                r,
                "/v1/counter/AddAndGetCount",
                (body, now) -> parser.counter(body, false, now),
                Mode.BY_COUNTER_TYPE,
                this::countAfterWrite);
        readAsync(r, "/v1/counter/GetCount", counters::getCountAsync);
        read(r, "/v1/counter/Recount", counters::recount);
        write(r, "/v1/timeseries/WriteEventRecords", (body, now) -> parser.events(body, now), Mode.ASYNC);
        write(r, "/v1/timeseries/WriteEventRecordsSync", (body, now) -> parser.events(body, now), Mode.SYNC);
        read(r, "/v1/timeseries/ReadEventRecords", reader::read);
        read(r, "/v1/timeseries/SearchEventRecords", search::search);
        read(r, "/v1/timeseries/AggregateEventRecords", search::aggregate);
        admin.mount(r);
        r.get("/healthz").handler(ctx -> {
            // The data plane decides up/down; a control plane that cannot take changes only
            // degrades the gateway (it serves with the last known namespace configs).
            boolean ok = kafka.up() && !draining;
            ObjectNode body = JSON.createObjectNode()
                    .put("status", !ok ? "DOWN" : control.up() ? "UP" : "DEGRADED")
                    .put("kafka", kafka.up() ? "UP" : "DOWN")
                    .put("kafka_detail", kafka.detail())
                    .put("draining", draining);
            body.set("control_plane", control.toJson());
            ctx.put("endpoint", "healthz");
            ctx.response()
                    .setStatusCode(ok ? 200 : 503)
                    .putHeader("Content-Type", "application/json")
                    .end(body.toString());
        });
        r.get("/metrics")
                .blockingHandler(
                        ctx -> {
                            ctx.put("endpoint", "metrics");
                            try {
                                ctx.response()
                                        .putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                                        .end(Buffer.buffer(metrics.scrape()));
                            } catch (Exception e) {
                                ctx.fail(e);
                            }
                        },
                        false);
        r.route()
                .last()
                .handler(ctx -> error(
                        ctx,
                        new ApiError(
                                404,
                                "NOT_FOUND",
                                "no endpoint " + ctx.request().method() + " "
                                        + ctx.request().path(),
                                null)));
        r.route().failureHandler(ctx -> {
            if (ctx.statusCode() == 413) {
                error(
                        ctx,
                        ApiError.tooLarge(
                                "BODY_TOO_LARGE", "the request body is larger than " + maxBodyBytes + " bytes", null));
            } else {
                LOG.error("request failed", ctx.failure());
                error(ctx, new ApiError(500, "INTERNAL", "internal error", null));
            }
        });
        return r;
    }

    private enum Mode {
        SYNC,
        ASYNC,
        BY_COUNTER_TYPE
    }

    private void write(Router r, String path, BiFunction<JsonNode, Long, WriteBatch> parse, Mode mode) {
        write(r, path, parse, mode, null);
    }

    /** AddAndGetCount's answer: the count with the write just made (see CounterReader). */
    private ObjectNode countAfterWrite(WriteBatch batch) {
        CounterEvent e = (CounterEvent) batch.records().get(0).value();
        return counters.count(
                batch.namespace(),
                e.getCounter(),
                new CounterReader.JustWritten(
                        e.getEventId(), new CounterFold.Mutation(Micros.of(e.getEventTime()), false, e.getDelta())));
    }

    /**
     * A write endpoint; with a follow-up, the answer is the follow-up's result, computed on a
     * worker thread once the write is acknowledged (or sent, for fire-and-forget types).
     */
    private void write(
            Router r,
            String path,
            BiFunction<JsonNode, Long, WriteBatch> parse,
            Mode mode,
            Function<WriteBatch, ObjectNode> followUp) {
        String endpoint = path.substring(path.lastIndexOf('/') + 1);
        r.route(path).handler(ctx -> {
            ctx.put("endpoint", endpoint);
            if (ctx.request().method() != HttpMethod.POST) {
                error(ctx, new ApiError(405, "METHOD_NOT_ALLOWED", path + " takes POST", null));
                return;
            }
            try {
                handleWrite(ctx, parse, mode, followUp);
            } catch (ApiError e) {
                error(ctx, e);
            } catch (SerdeException e) {
                LOG.warn("encoding failed: {}", e.getMessage());
                error(ctx, new ApiError(503, "SCHEMA_REGISTRY_UNAVAILABLE", e.getMessage(), null));
            }
        });
    }

    /** A read endpoint: parsed and answered on a worker thread (it waits on Cassandra). */
    private void read(Router r, String path, java.util.function.Function<JsonNode, ObjectNode> handler) {
        String endpoint = path.substring(path.lastIndexOf('/') + 1);
        r.route(path)
                .blockingHandler(
                        ctx -> {
                            ctx.put("endpoint", endpoint);
                            try {
                                if (ctx.request().method() != HttpMethod.POST) {
                                    throw new ApiError(405, "METHOD_NOT_ALLOWED", path + " takes POST", null);
                                }
                                JsonNode body = jsonBody(ctx);
                                ctx.response()
                                        .setStatusCode(200)
                                        .putHeader("Content-Type", "application/json")
                                        .end(handler.apply(body).toString());
                            } catch (ApiError e) {
                                error(ctx, e);
                            } catch (RuntimeException e) {
                                LOG.error("{} failed", path, e);
                                error(
                                        ctx,
                                        new ApiError(
                                                503,
                                                "STORAGE_UNAVAILABLE",
                                                "the read failed: " + e.getMessage(),
                                                null));
                            }
                        },
                        false);
    }

    /**
     * A read endpoint answered without a worker thread: the handler returns a stage that the
     * Cassandra driver completes (GetCount: one asynchronous read on the common path).
     */
    private void readAsync(Router r, String path, Function<JsonNode, CompletionStage<ObjectNode>> handler) {
        String endpoint = path.substring(path.lastIndexOf('/') + 1);
        r.route(path).handler(ctx -> {
            ctx.put("endpoint", endpoint);
            Context context = Vertx.currentContext();
            CompletionStage<ObjectNode> answer;
            try {
                if (ctx.request().method() != HttpMethod.POST) {
                    throw new ApiError(405, "METHOD_NOT_ALLOWED", path + " takes POST", null);
                }
                answer = handler.apply(jsonBody(ctx));
            } catch (ApiError e) {
                error(ctx, e);
                return;
            }
            answer.whenComplete((reply, err) -> context.runOnContext(v -> {
                Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                if (cause == null) {
                    ctx.response()
                            .setStatusCode(200)
                            .putHeader("Content-Type", "application/json")
                            .end(reply.toString());
                } else if (cause instanceof ApiError e) {
                    error(ctx, e);
                } else {
                    LOG.error("{} failed", path, cause);
                    error(
                            ctx,
                            new ApiError(503, "STORAGE_UNAVAILABLE", "the read failed: " + cause.getMessage(), null));
                }
            }));
        });
    }

    /** The request's JSON body: 415 for another content type, 400 for what does not parse. */
    static JsonNode jsonBody(RoutingContext ctx) {
        String ct = ctx.request().getHeader("Content-Type");
        if (ct == null || !ct.split(";")[0].trim().equalsIgnoreCase("application/json")) {
            throw new ApiError(415, "UNSUPPORTED_MEDIA_TYPE", "send the request as application/json", null);
        }
        JsonNode body;
        try {
            body = JSON.readTree(
                    ctx.body().buffer() == null
                            ? new byte[0]
                            : ctx.body().buffer().getBytes());
        } catch (Exception e) {
            throw ApiError.badRequest(
                    "MALFORMED_JSON", "the body is not valid JSON: " + firstLine(e.getMessage()), null);
        }
        if (body == null || body.isMissingNode()) {
            throw ApiError.badRequest("MALFORMED_JSON", "the body is empty", null);
        }
        return body;
    }

    private void handleWrite(
            RoutingContext ctx,
            BiFunction<JsonNode, Long, WriteBatch> parse,
            Mode mode,
            Function<WriteBatch, ObjectNode> followUp) {
        if (draining) {
            throw new ApiError(503, "SHUTTING_DOWN", "the gateway is shutting down; retry on another instance", null);
        }
        JsonNode body = jsonBody(ctx);
        long nowMillis = System.currentTimeMillis();
        WriteBatch batch = parse.apply(body, nowMillis * 1000);
        boolean sync = mode == Mode.SYNC
                || (mode == Mode.BY_COUNTER_TYPE
                        && batch.namespace().counterType().durable());
        if (sync && !kafka.up()) {
            throw new ApiError(
                    503,
                    "KAFKA_UNAVAILABLE",
                    "Kafka is unreachable; nothing was written, retry with the same ids",
                    null);
        }
        List<Long> remembered = claimIdempotencyKeys(batch, nowMillis);
        CompletableFuture<Void> acks;
        try {
            acks = producer.send(batch.records());
        } catch (EventProducer.Backpressure e) {
            remembered.forEach(tokens::forget);
            throw new ApiError(429, "BACKPRESSURE", e.getMessage(), null);
        } catch (EventProducer.Unavailable e) {
            remembered.forEach(tokens::forget);
            throw new ApiError(503, "KAFKA_UNAVAILABLE", e.getMessage(), null);
        }
        metrics.eventsAccepted
                .labelValues(batch.records().get(0).topic())
                .inc(batch.records().size());
        ObjectNode reply =
                JSON.createObjectNode().put("accepted", batch.records().size());
        if (!batch.generatedIds().isEmpty()) {
            reply.set("eventIds", JSON.valueToTree(batch.eventIds()));
            reply.set("generatedEventIds", JSON.valueToTree(batch.generatedIds()));
        }
        if (!sync && followUp != null) {
            answerWith(ctx, followUp, batch);
            return;
        }
        if (!sync) {
            ctx.response()
                    .setStatusCode(202)
                    .putHeader("Content-Type", "application/json")
                    .end(reply.toString());
            return;
        }
        Context context = Vertx.currentContext();
        acks.orTimeout(syncTimeoutMs, TimeUnit.MILLISECONDS)
                .whenComplete((ok, err) -> context.runOnContext(v -> {
                    if (err == null && followUp != null) {
                        answerWith(ctx, followUp, batch);
                        return;
                    }
                    if (err == null) {
                        ctx.response()
                                .setStatusCode(200)
                                .putHeader("Content-Type", "application/json")
                                .end(reply.toString());
                        return;
                    }
                    remembered.forEach(tokens::forget);
                    Throwable cause =
                            err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                    if (cause instanceof EventProducer.Backpressure) {
                        error(ctx, new ApiError(429, "BACKPRESSURE", cause.getMessage(), null));
                    } else {
                        String why = cause instanceof TimeoutException
                                ? "Kafka did not acknowledge within " + syncTimeoutMs + " ms"
                                : "Kafka did not acknowledge: " + cause.getMessage();
                        error(
                                ctx,
                                new ApiError(
                                        503,
                                        "KAFKA_UNAVAILABLE",
                                        why + "; retry with the same ids (writes are idempotent)",
                                        null));
                    }
                }));
    }

    private void answerWith(RoutingContext ctx, Function<WriteBatch, ObjectNode> followUp, WriteBatch batch) {
        ctx.vertx()
                .<ObjectNode>executeBlocking(() -> followUp.apply(batch), false)
                .onComplete(res -> {
                    if (res.succeeded()) {
                        ctx.response()
                                .setStatusCode(200)
                                .putHeader("Content-Type", "application/json")
                                .end(res.result().toString());
                    } else if (res.cause() instanceof ApiError e) {
                        error(ctx, e);
                    } else {
                        LOG.error("follow-up read failed", res.cause());
                        error(
                                ctx,
                                new ApiError(
                                        503,
                                        "STORAGE_UNAVAILABLE",
                                        "written, but the read failed: "
                                                + res.cause().getMessage(),
                                        null));
                    }
                });
    }

    /**
     * 409 when a client-given idempotency key comes back with another payload (in this request
     * or recently); remembers the new keys and returns them (forgotten again if the write fails).
     */
    private List<Long> claimIdempotencyKeys(WriteBatch batch, long nowMillis) {
        Map<Long, Long> inRequest = new HashMap<>();
        java.util.Set<Integer> generated = new java.util.HashSet<>(batch.generatedIds());
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
                throw new ApiError(
                        409,
                        "IDEMPOTENCY_KEY_REUSE",
                        "the idempotency key of " + field + " was already used with a different payload",
                        field);
            }
            if (v == IdempotencyCache.Verdict.NEW) {
                fresh.add(o.idempotencyKey());
            } else {
                metrics.dedupHits.inc();
            }
        }
        return fresh;
    }

    private void timeRequest(RoutingContext ctx) {
        long t0 = System.nanoTime();
        ctx.addEndHandler(v -> {
            String endpoint = ctx.get("endpoint");
            metrics.requests
                    .labelValues(
                            endpoint == null ? "other" : endpoint,
                            String.valueOf(ctx.response().getStatusCode()))
                    .inc();
            metrics.requestSeconds
                    .labelValues(endpoint == null ? "other" : endpoint)
                    .observe((System.nanoTime() - t0) / 1e9);
        });
        ctx.next();
    }

    static void error(RoutingContext ctx, ApiError e) {
        if (ctx.response().ended()) {
            return;
        }
        ObjectNode err = JSON.createObjectNode().put("code", e.code()).put("message", e.getMessage());
        if (e.field() != null) {
            err.put("field", e.field());
        }
        if (e.status() == 429 || e.status() == 503) {
            ctx.response().putHeader("Retry-After", "1");
        }
        ctx.response()
                .setStatusCode(e.status())
                .putHeader("Content-Type", "application/json")
                .end(JSON.createObjectNode().set("error", err).toString());
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
