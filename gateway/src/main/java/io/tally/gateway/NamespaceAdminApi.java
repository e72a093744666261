package io.tally.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.ServiceException.Kind;
import io.tally.namespace.InvalidConfigException;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfigParser;
import io.tally.namespace.NamespaceName;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane's admin API: GET /v1/namespaces, and GET, PUT, DELETE
 * /v1/namespaces/{name}. A PUT body is the namespace config of DESIGN.md, validated before it
 * is written (every error names its field). Optimistic concurrency: the version to replace
 * goes in If-Match (the ETag of a GET) or ?expected_version=; 0 means "create only". The
 * write lands in Postgres; every gateway and job applies it when Debezium streams it.
 * With an admin token configured, each call needs "Authorization: Bearer <token>".
 */
final class NamespaceAdminApi {
    private static final Logger LOG = LoggerFactory.getLogger(NamespaceAdminApi.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final NamespaceStore store;
    private final io.tally.namespace.NamespaceCatalog catalog;
    private final byte[] token;

    /** @param catalog what this gateway applies: its version is reported as applied_version */
    NamespaceAdminApi(NamespaceStore store, io.tally.namespace.NamespaceCatalog catalog, String adminToken) {
        this.store = store;
        this.catalog = catalog;
        this.token = adminToken == null || adminToken.isEmpty() ? null : adminToken.getBytes(StandardCharsets.UTF_8);
    }

    void mount(Router r) {
        r.get("/v1/namespaces")
                .blockingHandler(ctx -> handle(ctx, "namespaces", () -> {
                    ArrayNode all = JSON.createArrayNode();
                    for (NamespaceStore.Row row : store.list()) {
                        all.add(withApplied(row));
                    }
                    ObjectNode body = JSON.createObjectNode();
                    body.set("namespaces", all);
                    send(ctx, 200, body, null);
                }));
        r.get("/v1/namespaces/:name")
                .blockingHandler(ctx -> handle(ctx, "namespace", () -> {
                    String name = name(ctx);
                    NamespaceStore.Row row = store.get(name).orElseThrow(() -> unknown(name));
                    send(ctx, 200, withApplied(row), row);
                }));
        r.put("/v1/namespaces/:name")
                .blockingHandler(ctx -> handle(ctx, "namespace", () -> {
                    String name = name(ctx);
                    JsonNode body = GatewayHttpApi.jsonBody(ctx);
                    NamespaceConfig parsed;
                    try {
                        parsed = NamespaceConfigParser.parse(name, body);
                    } catch (InvalidConfigException e) {
                        throw ServiceException.invalid("INVALID_NAMESPACE_CONFIG", e.getMessage(), e.field());
                    }
                    NamespaceStore.Put put = store.put(parsed, body, expectedVersion(ctx));
                    ObjectNode out = put.row().toJson().put("changed", put.changed());
                    send(ctx, put.created() ? 201 : 200, out, put.row());
                }));
        r.delete("/v1/namespaces/:name")
                .blockingHandler(ctx -> handle(ctx, "namespace", () -> {
                    NamespaceStore.Row row = store.delete(name(ctx), expectedVersion(ctx));
                    send(ctx, 200, row.toJson().put("deleted", true), null);
                }));
    }

    /** The stored row and the version this gateway applies now (it lags the row until Debezium streamed it). */
    private ObjectNode withApplied(NamespaceStore.Row row) {
        return row.toJson()
                .put("applied_version", catalog.get(row.name()).isPresent() ? catalog.version(row.name()) : 0);
    }

    private interface Action {
        void run() throws SQLException;
    }

    private void handle(RoutingContext ctx, String endpoint, Action action) {
        ctx.put("endpoint", endpoint);
        try {
            authorize(ctx);
            action.run();
        } catch (ServiceException e) {
            GatewayHttpApi.error(ctx, e);
        } catch (SQLException e) {
            LOG.warn("control plane unavailable: {}", e.getMessage());
            GatewayHttpApi.error(
                    ctx,
                    new ServiceException(
                            Kind.UNAVAILABLE,
                            "CONTROL_PLANE_UNAVAILABLE",
                            "the control plane (Postgres) cannot take this request now; the data plane keeps its last configs: "
                                    + e.getMessage(),
                            null));
        }
    }

    private void authorize(RoutingContext ctx) {
        if (token == null) {
            return;
        }
        String h = ctx.request().getHeader("Authorization");
        byte[] given = h != null && h.startsWith("Bearer ")
                ? h.substring(7).trim().getBytes(StandardCharsets.UTF_8)
                : new byte[0];
        if (!MessageDigest.isEqual(given, token)) { // constant time: the token is not guessable byte by byte
            ctx.response().putHeader("WWW-Authenticate", "Bearer realm=\"tally-admin\"");
            throw new ServiceException(
                    Kind.UNAUTHORIZED,
                    "UNAUTHORIZED",
                    "the admin API needs 'Authorization: Bearer <admin token>'",
                    null);
        }
    }

    private static String name(RoutingContext ctx) {
        String name = ctx.pathParam("name");
        try {
            NamespaceName.require(name, "name");
        } catch (InvalidConfigException e) {
            throw ServiceException.invalid("INVALID_NAMESPACE_NAME", e.getMessage(), "name");
        }
        return name;
    }

    private static ServiceException unknown(String name) {
        return new ServiceException(
                Kind.NOT_FOUND, "UNKNOWN_NAMESPACE", "namespace '" + name + "' does not exist", "name");
    }

    /** If-Match: "3" (or W/"3", or 3), else ?expected_version=3, else null (unconditional). */
    static Long expectedVersion(RoutingContext ctx) {
        String raw = ctx.request().getHeader("If-Match");
        String field = "If-Match";
        if (raw == null) {
            raw = ctx.request().getParam("expected_version");
            field = "expected_version";
        }
        if (raw == null) {
            return null;
        }
        String v = raw.trim().replaceFirst("^W/", "").replace("\"", "");
        try {
            long n = Long.parseLong(v);
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw ServiceException.invalid(
                    "INVALID_VERSION",
                    field + " must be a namespace version (a whole number >= 0), not '" + raw + "'",
                    "version");
        }
    }

    private static void send(RoutingContext ctx, int status, ObjectNode body, NamespaceStore.Row etag) {
        if (etag != null) {
            ctx.response().putHeader("ETag", "\"" + etag.version() + "\"");
        }
        ctx.response()
                .setStatusCode(status)
                .putHeader("Content-Type", "application/json")
                .end(body.toString());
    }
}
