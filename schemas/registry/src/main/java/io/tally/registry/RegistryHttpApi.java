package io.tally.registry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.common.AdminToken;
import io.tally.common.OpenApiDocument;
import io.tally.model.TallySchemas;
import io.tally.registry.RegistryState.Version;
import io.tally.serde.AvroSerde;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.avro.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The Confluent Schema Registry REST API, as real clients (Java, Python, Go) call it. */
public final class RegistryHttpApi {
    private static final Logger LOG = LoggerFactory.getLogger(RegistryHttpApi.class);
    static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
    private static final Set<String> ACCEPTED_BODY_TYPES = Set.of(
            "application/vnd.schemaregistry.v1+json",
            "application/vnd.schemaregistry+json",
            "application/json",
            "application/octet-stream");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The API's contract (OpenAPI 3.1, Confluent's subset), served at /openapi.json. */
    static final OpenApiDocument DOCUMENT = OpenApiDocument.load(RegistryHttpApi.class, "openapi.json");

    /** What a handler answers: a status and a body (JSON-encoded unless already a String of raw text). */
    record Reply(int status, Object body, boolean raw) {
        static Reply ok(Object body) {
            return new Reply(200, body, false);
        }

        static Reply rawSchema(String schema) {
            return new Reply(200, schema, true);
        }
    }

    private final RegistryService service;
    private final RegistryMetrics metrics;
    private final java.util.function.BooleanSupplier healthy;
    private final AdminToken adminToken;

    RegistryHttpApi(
            RegistryService service,
            RegistryMetrics metrics,
            java.util.function.BooleanSupplier healthy,
            AdminToken adminToken) {
        this.service = service;
        this.metrics = metrics;
        this.healthy = healthy;
        this.adminToken = adminToken;
    }

    /** The value subjects of Tally's own topics: every record on them names one of their schemas. */
    private static final Set<String> TALLY_SUBJECTS = TallySchemas.TOPIC_VALUES.keySet().stream()
            .map(AvroSerde::valueSubject)
            .collect(java.util.stream.Collectors.toUnmodifiableSet());

    /**
     * A permanent delete of a Tally topic's value subject would make every record on the topic
     * undecodable after the next restart, so it is refused (a soft delete can be undone).
     */
    private static String unprotected(String subject, boolean permanent) {
        if (permanent && TALLY_SUBJECTS.contains(subject)) {
            throw new RegistryError(
                    409,
                    40901,
                    "subject '" + subject + "' holds the value schema of a Tally topic; its records would become"
                            + " undecodable, so it cannot be deleted permanently");
        }
        return subject;
    }

    /** Registering, config changes and deletes change what every producer and consumer relies on. */
    private static boolean isWrite(HttpMethod method, String path) {
        return method == HttpMethod.PUT
                || method == HttpMethod.DELETE
                || (method == HttpMethod.POST && path.equals("/subjects/:subject/versions"));
    }

    public Router router(Vertx vertx, int maxBodyBytes) {
        Router r = Router.router(vertx);
        r.route().handler(this::timeRequest);
        r.route().handler(BodyHandler.create().setBodyLimit(maxBodyBytes).setHandleFileUploads(false));
        api(r, HttpMethod.GET, "/", ctx -> Reply.ok(Map.of()));
        api(r, HttpMethod.GET, "/schemas/types", ctx -> Reply.ok(List.of("AVRO")));
        api(r, HttpMethod.GET, "/schemas/ids/:id", ctx -> Reply.ok(Map.of("schema", service.schemaById(id(ctx)))));
        api(r, HttpMethod.GET, "/schemas/ids/:id/schema", ctx -> Reply.rawSchema(service.schemaById(id(ctx))));
        api(
                r,
                HttpMethod.GET,
                "/schemas/ids/:id/subjects",
                ctx -> Reply.ok(service.usesOf(id(ctx), flag(ctx, "deleted")).stream()
                        .map(Version::subject)
                        .distinct()
                        .toList()));
        api(
                r,
                HttpMethod.GET,
                "/schemas/ids/:id/versions",
                ctx -> Reply.ok(service.usesOf(id(ctx), flag(ctx, "deleted")).stream()
                        .map(v -> Map.of("subject", v.subject(), "version", v.version()))
                        .toList()));
        api(r, HttpMethod.GET, "/subjects", ctx -> Reply.ok(service.subjects(flag(ctx, "deleted"))));
        api(
                r,
                HttpMethod.GET,
                "/subjects/:subject/versions",
                ctx -> Reply.ok(service.versions(subject(ctx), flag(ctx, "deleted"))));
        api(r, HttpMethod.POST, "/subjects/:subject/versions", ctx -> {
            Schema schema = schemaFromBody(ctx);
            return Reply.ok(Map.of("id", service.register(subject(ctx), schema)));
        });
        api(
                r,
                HttpMethod.POST,
                "/subjects/:subject",
                ctx -> Reply.ok(describe(service.lookup(subject(ctx), schemaFromBody(ctx), flag(ctx, "deleted")))));
        api(
                r,
                HttpMethod.GET,
                "/subjects/:subject/versions/:version",
                ctx -> Reply.ok(
                        describe(service.version(subject(ctx), ctx.pathParam("version"), flag(ctx, "deleted")))));
        api(
                r,
                HttpMethod.GET,
                "/subjects/:subject/versions/:version/schema",
                ctx -> Reply.rawSchema(service.version(subject(ctx), ctx.pathParam("version"), flag(ctx, "deleted"))
                        .schema()));
        api(r, HttpMethod.GET, "/subjects/:subject/versions/:version/referencedby", ctx -> {
            service.version(subject(ctx), ctx.pathParam("version"), false);
            return Reply.ok(List.of()); // no schema references in this registry
        });
        api(
                r,
                HttpMethod.DELETE,
                "/subjects/:subject",
                ctx -> Reply.ok(service.deleteSubject(
                        unprotected(subject(ctx), flag(ctx, "permanent")), flag(ctx, "permanent"))));
        api(
                r,
                HttpMethod.DELETE,
                "/subjects/:subject/versions/:version",
                ctx -> Reply.ok(service.deleteVersion(
                        unprotected(subject(ctx), flag(ctx, "permanent")),
                        ctx.pathParam("version"),
                        flag(ctx, "permanent"))));
        api(
                r,
                HttpMethod.GET,
                "/config",
                ctx -> Reply.ok(
                        Map.of("compatibilityLevel", service.globalLevel().name())));
        api(
                r,
                HttpMethod.PUT,
                "/config",
                ctx -> Reply.ok(Map.of(
                        "compatibility",
                        service.setLevel(null, levelFromBody(ctx)).name())));
        api(
                r,
                HttpMethod.DELETE,
                "/config",
                ctx -> Reply.ok(
                        Map.of("compatibilityLevel", service.deleteLevel(null).name())));
        api(
                r,
                HttpMethod.GET,
                "/config/:subject",
                ctx -> Reply.ok(Map.of(
                        "compatibilityLevel",
                        service.subjectLevel(subject(ctx), flag(ctx, "defaultToGlobal"))
                                .name())));
        api(
                r,
                HttpMethod.PUT,
                "/config/:subject",
                ctx -> Reply.ok(Map.of(
                        "compatibility",
                        service.setLevel(subject(ctx), levelFromBody(ctx)).name())));
        api(
                r,
                HttpMethod.DELETE,
                "/config/:subject",
                ctx -> Reply.ok(Map.of(
                        "compatibilityLevel", service.deleteLevel(subject(ctx)).name())));
        api(
                r,
                HttpMethod.POST,
                "/compatibility/subjects/:subject/versions/:version",
                ctx -> compatibility(ctx, ctx.pathParam("version")));
        api(r, HttpMethod.POST, "/compatibility/subjects/:subject/versions", ctx -> compatibility(ctx, null));
        api(r, HttpMethod.GET, "/mode", ctx -> Reply.ok(Map.of("mode", "READWRITE")));
        r.get("/healthz").handler(ctx -> {
            boolean ok = healthy.getAsBoolean();
            ctx.response()
                    .setStatusCode(ok ? 200 : 503)
                    .putHeader("Content-Type", "application/json")
                    .end("{\"status\":\"" + (ok ? "UP" : "DOWN") + "\"}");
        });
        r.get("/openapi.json").handler(ctx -> {
            ctx.put("endpoint", "GET /openapi.json");
            ctx.response()
                    .putHeader("Content-Type", "application/json")
                    .end(io.vertx.core.buffer.Buffer.buffer(DOCUMENT.bytes()));
        });
        r.get("/metrics")
                .blockingHandler(
                        ctx -> {
                            try {
                                ctx.response()
                                        .putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                                        .end(io.vertx.core.buffer.Buffer.buffer(metrics.scrape()));
                            } catch (Exception e) {
                                ctx.fail(e);
                            }
                        },
                        false);
        r.route().last().handler(ctx -> {
            java.util.Set<String> allowed = DOCUMENT.methodsOf(ctx.request().path());
            if (allowed.isEmpty()) {
                error(ctx, 404, 404, "HTTP 404 Not Found");
            } else { // RFC 9110: a 405 says what the path takes
                ctx.response().putHeader("Allow", String.join(", ", allowed));
                error(ctx, 405, 405, "HTTP 405 Method Not Allowed");
            }
        });
        r.route().failureHandler(this::failure);
        return r;
    }

    public static HttpServer listen(Vertx vertx, Router router, String host, int port) throws Exception {
        return vertx.createHttpServer()
                .requestHandler(router)
                .listen(port, host)
                .toCompletionStage()
                .toCompletableFuture()
                .get();
    }

    // ---- plumbing --------------------------------------------------------------------------

    private void api(Router r, HttpMethod method, String path, Function<RoutingContext, Reply> handler) {
        r.route(method, path)
                .blockingHandler(
                        ctx -> {
                            ctx.put("endpoint", method.name() + " " + path);
                            if (isWrite(method, path)
                                    && !adminToken.permits(ctx.request().getHeader("Authorization"))) {
                                ctx.response().putHeader("WWW-Authenticate", "Basic realm=\"tally-registry\"");
                                error(
                                        ctx,
                                        401,
                                        40101,
                                        java.util.Objects.requireNonNullElse(
                                                adminToken.refusal(
                                                        RegistryConfig.ADMIN_TOKEN.env(),
                                                        RegistryConfig.ADMIN_OPEN.env()),
                                                "Unauthorized: registry writes and deletes need the admin token"
                                                        + " (Authorization: Bearer <token>, or"
                                                        + " basic.auth.user.info=<any user>:<token>)"));
                                return;
                            }
                            if ((method == HttpMethod.POST || method == HttpMethod.PUT) && !acceptedBody(ctx)) {
                                error(
                                        ctx,
                                        415,
                                        415,
                                        "HTTP 415 Unsupported Media Type: send " + CONTENT_TYPE
                                                + " or application/json");
                                return;
                            }
                            Reply reply;
                            try {
                                reply = handler.apply(ctx);
                            } catch (RegistryError e) {
                                error(ctx, e.status(), e.errorCode(), e.getMessage());
                                return;
                            } catch (RuntimeException e) {
                                LOG.error("{} {} failed", method, ctx.request().path(), e);
                                error(ctx, 500, 50001, "Error in the backend data store: " + e.getMessage());
                                return;
                            }
                            try {
                                String body =
                                        reply.raw() ? (String) reply.body() : JSON.writeValueAsString(reply.body());
                                ctx.response()
                                        .setStatusCode(reply.status())
                                        .putHeader("Content-Type", CONTENT_TYPE)
                                        .end(body);
                            } catch (JsonProcessingException e) {
                                error(ctx, 500, 50001, "could not encode the response");
                            }
                        },
                        false);
    }

    private void timeRequest(RoutingContext ctx) {
        long t0 = System.nanoTime();
        ctx.addEndHandler(v -> {
            String endpoint = ctx.get("endpoint");
            if (endpoint == null) {
                endpoint = "other";
            }
            metrics.requests
                    .labelValues(endpoint, String.valueOf(ctx.response().getStatusCode()))
                    .inc();
            metrics.latency.labelValues(endpoint).observe((System.nanoTime() - t0) / 1e9);
        });
        ctx.next();
    }

    private void failure(RoutingContext ctx) {
        int status = ctx.statusCode();
        if (status == 413) {
            error(ctx, 413, 413, "HTTP 413 Payload Too Large: the body exceeds the registry's limit");
        } else if (status == 400) {
            error(ctx, 400, 400, "HTTP 400 Bad Request");
        } else {
            LOG.error("request failed", ctx.failure());
            error(ctx, 500, 50001, "Internal error");
        }
    }

    private static void error(RoutingContext ctx, int status, int code, String message) {
        if (ctx.response().ended()) {
            return;
        }
        ObjectNode body = JSON.createObjectNode().put("error_code", code).put("message", message);
        ctx.response()
                .setStatusCode(status)
                .putHeader("Content-Type", CONTENT_TYPE)
                .end(body.toString());
    }

    private static boolean acceptedBody(RoutingContext ctx) {
        String ct = ctx.request().getHeader("Content-Type");
        if (ct == null || ct.isBlank()) {
            return true;
        }
        return ACCEPTED_BODY_TYPES.contains(ct.split(";")[0].trim().toLowerCase());
    }

    private static JsonNode bodyJson(RoutingContext ctx) {
        String text = ctx.body() == null ? null : ctx.body().asString();
        if (text == null || text.isBlank()) {
            throw new RegistryError(400, 400, "Request body is empty; expected a JSON object");
        }
        JsonNode node;
        try {
            node = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new RegistryError(400, 400, "Request body is not valid JSON: " + e.getOriginalMessage());
        }
        if (node == null || !node.isObject()) {
            throw new RegistryError(400, 400, "Request body must be a JSON object");
        }
        return node;
    }

    private static Schema schemaFromBody(RoutingContext ctx) {
        JsonNode body = bodyJson(ctx);
        JsonNode schema = body.get("schema");
        if (schema == null || !schema.isTextual()) {
            throw RegistryError.invalidSchema("the body needs a \"schema\" field holding the schema as a string");
        }
        JsonNode type = body.get("schemaType");
        JsonNode refs = body.get("references");
        if (refs != null && !refs.isNull() && !refs.isArray()) {
            throw RegistryError.invalidSchema("\"references\" must be an array");
        }
        return RegistryService.parse(
                type == null || type.isNull() ? null : type.asText(),
                schema.asText(),
                refs != null && refs.isArray() && !refs.isEmpty());
    }

    private static String levelFromBody(RoutingContext ctx) {
        JsonNode level = bodyJson(ctx).get("compatibility");
        if (level == null || !level.isTextual()) {
            throw RegistryError.invalidCompatibility(level == null ? "(missing \"compatibility\")" : level.toString());
        }
        return level.asText();
    }

    private Reply compatibility(RoutingContext ctx, String version) {
        Schema schema = schemaFromBody(ctx);
        List<String> problems = service.checkCompatibility(subject(ctx), version, schema);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("is_compatible", problems.isEmpty());
        if (flag(ctx, "verbose")) {
            body.put("messages", problems);
        }
        return Reply.ok(body);
    }

    private static Map<String, Object> describe(Version v) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("subject", v.subject());
        m.put("version", v.version());
        m.put("id", v.id());
        m.put("schema", v.schema());
        return m;
    }

    private static String subject(RoutingContext ctx) {
        String s = ctx.pathParam("subject");
        RegistryService.checkSubject(s);
        return s;
    }

    private static int id(RoutingContext ctx) {
        String raw = ctx.pathParam("id");
        try {
            return Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            throw RegistryError.schemaNotFound(raw);
        }
    }

    /** A boolean query parameter: absent is false; anything but true or false is refused, not read as false. */
    private static boolean flag(RoutingContext ctx, String name) {
        String v = ctx.queryParams().get(name);
        if (v == null || v.equalsIgnoreCase("false")) {
            return false;
        }
        if (v.equalsIgnoreCase("true")) {
            return true;
        }
        throw new RegistryError(400, 400, "Query parameter '" + name + "' must be true or false, not '" + v + "'");
    }
}
