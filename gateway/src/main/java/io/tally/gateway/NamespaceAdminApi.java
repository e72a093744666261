package io.tally.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.common.AdminToken;
import io.tally.gateway.service.ErrorCode;
import io.tally.gateway.service.NamespaceAdmin;
import io.tally.gateway.service.NamespaceStore;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.ServiceException.Kind;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP mapping of the control plane's admin API ({@link NamespaceAdmin}): GET
 * /v1/namespaces, and GET, PUT, DELETE /v1/namespaces/{name}. The version to replace goes in
 * If-Match (the ETag of a GET) or ?expected_version=; 0 means "create only". The write lands in
 * Postgres; every gateway and job applies it when Debezium streams it.
 * With an admin token set (./tally up always sets one), each call needs it ({@link AdminToken}).
 */
final class NamespaceAdminApi {
    private static final Logger LOG = LoggerFactory.getLogger(NamespaceAdminApi.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final NamespaceAdmin admin;
    private final AdminToken token;

    NamespaceAdminApi(NamespaceAdmin admin, AdminToken token) {
        this.admin = admin;
        this.token = token;
    }

    /** The token the admin calls need; Recount, an operator's call, needs it too. */
    AdminToken token() {
        return token;
    }

    void mount(Router r) {
        r.get("/v1/namespaces")
                .blockingHandler(ctx -> handle(ctx, "namespaces", () -> {
                    ArrayNode all = JSON.createArrayNode();
                    admin.list().forEach(n -> all.add(toJson(n)));
                    ObjectNode body = JSON.createObjectNode();
                    body.set("namespaces", all);
                    send(ctx, 200, body, null);
                }));
        r.get("/v1/namespaces/:name")
                .blockingHandler(ctx -> handle(ctx, "namespace", () -> {
                    NamespaceAdmin.Namespace n = admin.get(ctx.pathParam("name"));
                    send(ctx, 200, toJson(n), n.row());
                }));
        r.put("/v1/namespaces/:name")
                .blockingHandler(ctx -> handle(ctx, "namespace", () -> {
                    NamespaceAdmin.Put put =
                            admin.put(ctx.pathParam("name"), RequestJson.body(ctx), expectedVersion(ctx));
                    send(ctx, put.created() ? 201 : 200, put.row().toJson().put("changed", put.changed()), put.row());
                }));
        r.delete("/v1/namespaces/:name")
                .blockingHandler(ctx -> handle(ctx, "namespace", () -> {
                    NamespaceStore.Row row = admin.delete(ctx.pathParam("name"), expectedVersion(ctx));
                    send(ctx, 200, row.toJson().put("deleted", true), null);
                }));
    }

    private static ObjectNode toJson(NamespaceAdmin.Namespace n) {
        return n.row().toJson().put("applied_version", n.appliedVersion());
    }

    private void handle(RoutingContext ctx, String endpoint, Runnable action) {
        ctx.put("endpoint", endpoint);
        try {
            authorize(token, ctx);
            action.run();
        } catch (ServiceException e) {
            if (e.kind() == Kind.UNAVAILABLE) {
                LOG.warn("control plane unavailable: {}", e.getMessage());
            }
            HttpErrors.send(ctx, e);
        }
    }

    /** Refuses (401) a call without the admin token (every call, when the gateway has none and is not opened). */
    static void authorize(AdminToken token, RoutingContext ctx) {
        if (!token.permits(ctx.request().getHeader("Authorization"))) {
            ctx.response().putHeader("WWW-Authenticate", "Bearer realm=\"tally-admin\"");
            throw new ServiceException(
                    ErrorCode.UNAUTHORIZED,
                    Objects.requireNonNullElse(
                            token.refusal(GatewayConfig.ADMIN_TOKEN.env(), GatewayConfig.ADMIN_OPEN.env()),
                            "this call needs 'Authorization: Bearer <admin token>' (./tally status shows it)"),
                    null);
        }
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
            throw new ServiceException(
                    ErrorCode.INVALID_VERSION,
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
