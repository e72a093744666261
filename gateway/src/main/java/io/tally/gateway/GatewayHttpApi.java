package io.tally.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.Unpooled;
import io.tally.common.OpenApiDocument;
import io.tally.gateway.service.ClosedPageCache;
import io.tally.gateway.service.CounterQueries;
import io.tally.gateway.service.CounterRecount;
import io.tally.gateway.service.ErrorCode;
import io.tally.gateway.service.EventSearchQueries;
import io.tally.gateway.service.Failures;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.TimeSeriesQueries;
import io.tally.gateway.service.WriteBatch;
import io.tally.gateway.service.WriteService;
import io.tally.model.Micros;
import io.tally.namespace.CounterFold;
import io.tally.serde.SerdeException;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tally.v1.CounterEvent;

/** The gateway's HTTP endpoints (docs/design.md, "Gateway API"). */
final class GatewayHttpApi {
    private static final Logger LOG = LoggerFactory.getLogger(GatewayHttpApi.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final OpenApiDocument DOCUMENT = GatewayOpenApi.DOCUMENT;

    private final WriteRequestParser parser;
    private final ReadRequests reads;
    private final WriteService writes;
    private final TimeSeriesQueries timeSeries;
    private final SearchRequests searches;
    private final EventSearchQueries search;
    private final CounterQueries counters;
    private final CounterRecount recount;
    private final Health health;
    private final GatewayMetrics metrics;
    private final int maxBodyBytes;
    private final NamespaceAdminApi admin;
    /** The endpoints DirectEndpoints answers, by path; filled as router() mounts their routes. */
    private final java.util.Map<String, DirectEndpoints.Endpoint> direct = new java.util.HashMap<>();

    /** What /healthz reports besides draining: the data plane's Kafka and the control plane. */
    interface Health {
        boolean kafkaUp();

        String kafkaDetail();

        boolean controlPlaneUp();

        ObjectNode controlPlane();

        /** For tests of the HTTP layer alone. */
        Health ALWAYS_UP = new Health() {
            @Override
            public boolean kafkaUp() {
                return true;
            }

            @Override
            public String kafkaDetail() {
                return "";
            }

            @Override
            public boolean controlPlaneUp() {
                return true;
            }

            @Override
            public ObjectNode controlPlane() {
                return JSON.createObjectNode().put("status", "UP");
            }
        };
    }

    /**
     * The HTTP mapping of the gateway's services: routes, JSON in and out, and the one place a
     * refusal becomes a status ({@link HttpErrors}).
     *
     * @param parser JSON requests to validated write batches (and the namespace they name)
     * @param reads JSON read requests to the query services' requests, and their answers to JSON
     */
    GatewayHttpApi(
            WriteRequestParser parser,
            ReadRequests reads,
            WriteService writes,
            TimeSeriesQueries timeSeries,
            SearchRequests searches,
            EventSearchQueries search,
            CounterQueries counters,
            CounterRecount recount,
            Health health,
            GatewayMetrics metrics,
            int maxBodyBytes,
            NamespaceAdminApi admin) {
        this.parser = parser;
        this.reads = reads;
        this.writes = writes;
        this.timeSeries = timeSeries;
        this.searches = searches;
        this.search = search;
        this.counters = counters;
        this.recount = recount;
        this.health = health;
        this.metrics = metrics;
        this.maxBodyBytes = maxBodyBytes;
        this.admin = admin;
    }

    /** From now on, writes are refused with 503 and /healthz says so (graceful shutdown). */
    void drain() {
        writes.drain();
    }

    /**
     * What the gateway's HTTP servers run: the data plane's common requests answered before the
     * router (DirectEndpoints), everything else through it.
     */
    DirectEndpoints requestHandler(Vertx vertx) {
        Router router = router(vertx);
        return new DirectEndpoints(router, direct, metrics, maxBodyBytes);
    }

    Router router(Vertx vertx) {
        Router r = Router.router(vertx);
        r.route().handler(this::timeRequest);
        r.route().handler(BodyHandler.create().setBodyLimit(maxBodyBytes).setHandleFileUploads(false));
        write(r, "/v1/counter/AddCount", (body, now) -> parser.counter(body.tree(), false, now), Mode.BY_COUNTER_TYPE);
        write(r, "/v1/counter/ClearCount", (body, now) -> parser.counter(body.tree(), true, now), Mode.BY_COUNTER_TYPE);
        write(
                r,
                "/v1/counter/AddAndGetCount",
                (body, now) -> parser.counter(body.tree(), false, now),
                Mode.BY_COUNTER_TYPE,
                new FollowUp(this::countAfterWriteFromView, this::countAfterWrite));
        String getCount = "/v1/counter/GetCount";
        post(r, getCount, (request, body) -> answer(request, getCount, getCount(body)));
        read(
                r,
                "/v1/counter/Recount",
                ctx -> NamespaceAdminApi.authorize(admin.token(), ctx),
                body -> ReadRequests.recounted(recount.recount(reads.recount(body))));
        write(r, "/v1/timeseries/WriteEventRecords", this::events, Mode.ASYNC);
        write(r, "/v1/timeseries/WriteEventRecordsSync", this::events, Mode.SYNC);
        String readEvents = "/v1/timeseries/ReadEventRecords";
        post(r, readEvents, (request, body) -> answer(request, readEvents, readEvents(body)));
        read(r, "/v1/timeseries/SearchEventRecords", body -> SearchRequests.page(search.search(searches.search(body))));
        read(
                r,
                "/v1/timeseries/AggregateEventRecords",
                body -> SearchRequests.distinct(search.distinct(searches.distinct(body))));
        admin.mount(r);
        r.get("/healthz").handler(ctx -> {
            // The data plane decides up/down; a control plane that cannot take changes only
            // degrades the gateway (it serves with the last known namespace configs).
            boolean kafkaUp = health.kafkaUp();
            boolean ok = kafkaUp && !writes.draining();
            ObjectNode body = JSON.createObjectNode()
                    .put("status", !ok ? "DOWN" : health.controlPlaneUp() ? "UP" : "DEGRADED")
                    .put("kafka", kafkaUp ? "UP" : "DOWN")
                    .put("kafka_detail", health.kafkaDetail())
                    .put("draining", writes.draining());
            body.set("control_plane", health.controlPlane());
            ctx.put("endpoint", "healthz");
            ctx.response()
                    .setStatusCode(ok ? 200 : 503)
                    .putHeader("Content-Type", "application/json")
                    .end(body.toString());
        });
        r.get("/openapi.json").handler(ctx -> {
            ctx.put("endpoint", "openapi");
            ctx.response().putHeader("Content-Type", "application/json").end(Buffer.buffer(DOCUMENT.bytes()));
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
        r.route().last().handler(ctx -> {
            java.util.Set<String> allowed = DOCUMENT.methodsOf(ctx.request().path());
            HttpErrors.send(
                    ctx,
                    allowed.isEmpty()
                            ? new ServiceException(
                                    ErrorCode.NOT_FOUND,
                                    "no endpoint " + ctx.request().method() + " "
                                            + ctx.request().path(),
                                    null)
                            : new ServiceException(
                                    ErrorCode.METHOD_NOT_ALLOWED,
                                    ctx.request().path() + " takes " + String.join(", ", allowed),
                                    null));
        });
        r.route().failureHandler(ctx -> {
            if (ctx.statusCode() == 413) {
                HttpErrors.send(
                        ctx,
                        new ServiceException(
                                ErrorCode.BODY_TOO_LARGE,
                                "the request body is larger than " + maxBodyBytes + " bytes",
                                null));
            } else {
                LOG.error("request failed", ctx.failure());
                HttpErrors.send(ctx, new ServiceException(ErrorCode.INTERNAL, "internal error", null));
            }
        });
        return r;
    }

    private enum Mode {
        SYNC,
        ASYNC,
        BY_COUNTER_TYPE
    }

    private void write(Router r, String path, WriteParse parse, Mode mode) {
        write(r, path, parse, mode, null);
    }

    /** AddAndGetCount's answer: the count with the write just made (see CounterQueries); blocks. */
    private Buffer countAfterWrite(WriteBatch batch) {
        CounterEvent e = (CounterEvent) batch.records().get(0).value();
        Buffer answer = ReadRequests.count(counters.countAfterWrite(batch.namespace(), e.getCounter(), justWritten(e)));
        metrics.addAndGet(false);
        return answer;
    }

    /** The same from the counter view, on the event loop; null when the view cannot tell it. */
    private Buffer countAfterWriteFromView(WriteBatch batch) {
        CounterEvent e = (CounterEvent) batch.records().get(0).value();
        CounterQueries.Count count =
                counters.countAfterWriteFromView(batch.namespace(), e.getCounter(), justWritten(e));
        if (count == null) {
            return null;
        }
        metrics.addAndGet(true);
        return ReadRequests.count(count);
    }

    private static CounterQueries.JustWritten justWritten(CounterEvent e) {
        return new CounterQueries.JustWritten(
                e.getEventId(), new CounterFold.Mutation(Micros.of(e.getEventTime()), false, e.getDelta()));
    }

    /**
     * What answers a write after it is acknowledged: onLoop on the event loop when it can (it
     * returns null when it cannot, and may not block), else blocking on a worker thread.
     */
    private record FollowUp(Function<WriteBatch, Buffer> onLoop, Function<WriteBatch, Buffer> blocking) {}

    /**
     * A write endpoint; with a follow-up, the answer is the follow-up's result, computed on a
     * worker thread once the write is acknowledged (or sent, for fire-and-forget types).
     */
    private void write(Router r, String path, WriteParse parse, Mode mode, FollowUp followUp) {
        post(r, path, (request, body) -> handleWrite(request, body, parse, mode, followUp));
    }

    /** A write's records from its body and the time it arrived (µs); it may throw a refusal. */
    @FunctionalInterface
    private interface WriteParse {
        WriteBatch parse(RequestBody body, long nowMicros);
    }

    /**
     * WriteEventRecords(Sync)'s batch: the common body read without a tree; any other, or one that
     * is refused, read as a tree, whose refusal names the field.
     */
    private WriteBatch events(RequestBody body, long nowMicros) {
        WriteBatch common = body.isJson() ? parser.commonEvents(body.buffer(), nowMicros) : null;
        return common != null ? common : parser.events(body.tree(), nowMicros);
    }

    /**
     * What answers a POST given its body, parsed when asked (a draining gateway refuses a write
     * before reading it); it may throw a ServiceException (a refusal).
     */
    @FunctionalInterface
    private interface PostHandler {
        void answer(HttpServerRequest request, RequestBody body);
    }

    /**
     * A POST's body as it arrived (null when empty), read when a handler asks: as a tree, or as
     * flat string fields where it is only that (FlatStringFields; null otherwise).
     */
    private record RequestBody(String contentType, Buffer buffer, String routePath) {
        JsonNode tree() {
            return RequestJson.body(contentType, buffer, HttpMethod.POST, routePath);
        }

        String[] flat(String... names) {
            return isJson() ? FlatStringFields.read(buffer, names) : null;
        }

        /** A body of the JSON content type, to be read. */
        boolean isJson() {
            return buffer != null && RequestJson.isJson(contentType);
        }
    }

    /**
     * A POST endpoint answered on the event loop, mounted twice with one handler: as a route (a
     * chunked or oversize body, a wrong method) and as a direct endpoint (the common request).
     */
    private void post(Router r, String path, PostHandler handler) {
        String endpoint = path.substring(path.lastIndexOf('/') + 1);
        r.route(path).handler(ctx -> {
            ctx.put("endpoint", endpoint);
            answerRefusing(ctx.request(), () -> {
                if (ctx.request().method() != HttpMethod.POST) {
                    throw new ServiceException(ErrorCode.METHOD_NOT_ALLOWED, path + " takes POST", null);
                }
                handler.answer(
                        ctx.request(),
                        new RequestBody(
                                ctx.request().getHeader("Content-Type"),
                                ctx.body().buffer(),
                                path));
            });
        });
        direct.put(
                path,
                new DirectEndpoints.Endpoint(
                        endpoint,
                        (request, buffer) -> answerRefusing(
                                request,
                                () -> handler.answer(
                                        request,
                                        new RequestBody(
                                                request.getHeader("Content-Type"),
                                                buffer.length() == 0 ? null : buffer,
                                                path)))));
    }

    /** Runs a handler; a refusal it throws is answered with its code, a bug with 500 INTERNAL. */
    private static void answerRefusing(HttpServerRequest request, Runnable handler) {
        try {
            handler.run();
        } catch (ServiceException e) {
            HttpErrors.send(request, e);
        } catch (SerdeException e) {
            LOG.warn("encoding failed: {}", e.getMessage());
            HttpErrors.send(request, new ServiceException(ErrorCode.SCHEMA_REGISTRY_UNAVAILABLE, e.getMessage(), null));
        } catch (RuntimeException e) { // what the router's failure handler answers
            LOG.error("request failed", e);
            HttpErrors.send(request, new ServiceException(ErrorCode.INTERNAL, "internal error", null));
        }
    }

    /** A read endpoint: parsed and answered on a worker thread (it waits on Cassandra). */
    private void read(Router r, String path, Function<JsonNode, ObjectNode> handler) {
        read(r, path, ctx -> {}, handler);
    }

    /** @param guard refuses the call (throws) before its body is read, e.g. without the admin token */
    private void read(
            Router r,
            String path,
            java.util.function.Consumer<RoutingContext> guard,
            Function<JsonNode, ObjectNode> handler) {
        String endpoint = path.substring(path.lastIndexOf('/') + 1);
        r.route(path)
                .blockingHandler(
                        ctx -> {
                            ctx.put("endpoint", endpoint);
                            try {
                                if (ctx.request().method() != HttpMethod.POST) {
                                    throw new ServiceException(
                                            ErrorCode.METHOD_NOT_ALLOWED, path + " takes POST", null);
                                }
                                guard.accept(ctx);
                                JsonNode body = RequestJson.body(ctx);
                                ctx.response()
                                        .setStatusCode(200)
                                        .putHeader("Content-Type", "application/json")
                                        .end(json(handler.apply(body)));
                            } catch (ServiceException e) {
                                HttpErrors.send(ctx, e);
                            } catch (RuntimeException e) {
                                LOG.error("{} failed", path, e);
                                HttpErrors.send(
                                        ctx,
                                        new ServiceException(
                                                ErrorCode.STORAGE_UNAVAILABLE,
                                                "the read failed: " + e.getMessage(),
                                                null));
                            }
                        },
                        false);
    }

    /**
     * GetCount's answer, without a worker thread: a stage the view has completed, or the Cassandra
     * driver completes (one asynchronous read on the common path). The common body is read as flat
     * fields; any other is read as a tree, which refuses what is wrong with it.
     */
    private CompletionStage<Buffer> getCount(RequestBody body) {
        String[] fields = body.flat("namespace", "counter_name");
        ReadRequests.CounterRef c = fields != null ? reads.counter(fields[0], fields[1]) : reads.counter(body.tree());
        return counters.getCount(c.namespace(), c.counter()).thenApply(ReadRequests::count);
    }

    /**
     * ReadEventRecords' answer: a page the cache of closed pages holds is answered on the event loop
     * (parsed, looked up and written there; it waits on nothing), its bytes made once and kept
     * beside it; any other is read from Cassandra on a worker thread, since the read waits on the
     * driver.
     */
    private CompletionStage<Buffer> readEvents(RequestBody body) {
        TimeSeriesQueries.ReadQuery q = reads.readEvents(body.tree());
        ClosedPageCache.Kept kept = timeSeries.kept(q);
        if (kept != null) {
            byte[] answer = kept.answer();
            if (answer == null) {
                answer = ReadRequests.pageBytes(q.timeSeriesId(), kept.page());
                kept.remember(answer);
            }
            return CompletableFuture.completedFuture(Buffer.buffer(Unpooled.wrappedBuffer(answer)));
        }
        return Vertx.currentContext()
                .owner()
                .executeBlocking(() -> ReadRequests.page(q.timeSeriesId(), timeSeries.read(q)), false)
                .toCompletionStage();
    }

    /**
     * Answers a request with a read's result: at once when the stage is already done (the view
     * answered: no hop back to the loop), else on the request's event loop when it completes.
     */
    private static void answer(HttpServerRequest request, String path, CompletionStage<Buffer> answer) {
        CompletableFuture<Buffer> done = answer.toCompletableFuture();
        if (done.isDone() && !done.isCompletedExceptionally()) {
            ok(request.response(), done.join());
            return;
        }
        Context context = Vertx.currentContext();
        answer.whenComplete((reply, err) -> context.runOnContext(v -> {
            Throwable cause = Failures.unwrap(err);
            if (cause == null) {
                ok(request.response(), reply);
            } else if (cause instanceof ServiceException e) {
                HttpErrors.send(request, e);
            } else {
                LOG.error("{} failed", path, cause);
                HttpErrors.send(
                        request,
                        new ServiceException(
                                ErrorCode.STORAGE_UNAVAILABLE, "the read failed: " + cause.getMessage(), null));
            }
        }));
    }

    /**
     * A JSON answer's bytes, written straight from the tree (toString made a String that Vert.x then
     * encoded again to UTF-8).
     */
    static Buffer json(JsonNode body) {
        try {
            return Buffer.buffer(JSON.writeValueAsBytes(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree that cannot be written", e);
        }
    }

    private static void ok(HttpServerResponse response, Buffer reply) {
        response.setStatusCode(200)
                .putHeader("Content-Type", "application/json")
                .end(reply);
    }

    private void handleWrite(
            HttpServerRequest request, RequestBody parsed, WriteParse parse, Mode mode, FollowUp followUp) {
        writes.checkOpen();
        long nowMillis = System.currentTimeMillis();
        WriteBatch batch = parse.parse(parsed, nowMillis * 1000);
        boolean durable = mode == Mode.SYNC
                || (mode == Mode.BY_COUNTER_TYPE
                        && batch.namespace().counterType().durable());
        Context context = Vertx.currentContext();
        writes.write(batch, durable, nowMillis)
                .whenComplete((written, err) -> context.runOnContext(v -> {
                    if (err != null) {
                        Throwable cause = Failures.unwrap(err);
                        HttpErrors.send(request, cause instanceof ServiceException e ? e : HttpErrors.internal(cause));
                    } else if (followUp != null) {
                        answerWith(context, request, followUp, batch);
                    } else {
                        request.response()
                                .setStatusCode(durable ? 200 : 202)
                                .putHeader("Content-Type", "application/json")
                                .end(accepted(batch));
                    }
                }));
    }

    /**
     * A write's answer: {"accepted": n}, written as bytes when every id was the caller's (the common
     * answer; a tree and its serializer cost more than the answer), with the ids when some were made here.
     */
    static Buffer accepted(WriteBatch batch) {
        if (batch.generatedIds().isEmpty()) {
            return Buffer.buffer("{\"accepted\":" + batch.records().size() + "}");
        }
        ObjectNode reply =
                JSON.createObjectNode().put("accepted", batch.records().size());
        reply.set("eventIds", JSON.valueToTree(batch.eventIds()));
        reply.set("generatedEventIds", JSON.valueToTree(batch.generatedIds()));
        return json(reply);
    }

    private void answerWith(Context context, HttpServerRequest request, FollowUp followUp, WriteBatch batch) {
        Buffer onLoop;
        try {
            onLoop = followUp.onLoop().apply(batch);
        } catch (RuntimeException e) { // a bug here must not leave the request unanswered: the worker asks again
            LOG.error("follow-up on the event loop failed", e);
            onLoop = null;
        }
        if (onLoop != null) {
            ok(request.response(), onLoop);
            return;
        }
        context.owner()
                .<Buffer>executeBlocking(() -> followUp.blocking().apply(batch), false)
                .onComplete(res -> {
                    if (res.succeeded()) {
                        ok(request.response(), res.result());
                    } else if (res.cause() instanceof ServiceException e) {
                        HttpErrors.send(request, e);
                    } else {
                        LOG.error("follow-up read failed", res.cause());
                        HttpErrors.send(
                                request,
                                new ServiceException(
                                        ErrorCode.STORAGE_UNAVAILABLE,
                                        "written, but the read failed: "
                                                + res.cause().getMessage(),
                                        null));
                    }
                });
    }

    private void timeRequest(RoutingContext ctx) {
        long t0 = System.nanoTime();
        ctx.addEndHandler(v -> {
            String endpoint = ctx.get("endpoint");
            metrics.request(
                    endpoint == null ? "other" : endpoint,
                    ctx.response().getStatusCode(),
                    (System.nanoTime() - t0) / 1e9);
        });
        ctx.next();
    }
}
