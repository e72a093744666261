package io.tally.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.service.ErrorCode;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.ServiceException.Kind;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

/** The one place a service's refusal becomes an HTTP status (docs/design.md, "Errors"). */
final class HttpErrors {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HttpErrors() {}

    static int status(Kind kind) {
        return switch (kind) {
            case INVALID -> 400;
            case UNAUTHORIZED -> 401;
            case NOT_FOUND -> 404;
            case METHOD_NOT_ALLOWED -> 405;
            case CONFLICT -> 409;
            case TOO_LARGE -> 413;
            case UNSUPPORTED_MEDIA_TYPE -> 415;
            case BACKPRESSURE -> 429;
            case UNAVAILABLE -> 503;
            case INTERNAL -> 500;
        };
    }

    /** What a failure that is no refusal (a bug) shows: a code and no stack trace. */
    static ServiceException internal(Throwable cause) {
        return new ServiceException(ErrorCode.INTERNAL, "internal error", null);
    }

    /** Answers a refusal: its status, Retry-After where a retry may succeed, and {"error": {code, message, field}}. */
    static void send(RoutingContext ctx, ServiceException e) {
        send(ctx.request(), e);
    }

    /** The same, for a request answered without the router (DirectEndpoints). */
    static void send(HttpServerRequest request, ServiceException e) {
        HttpServerResponse response = request.response();
        if (response.ended()) {
            return;
        }
        ObjectNode err = JSON.createObjectNode().put("code", e.code()).put("message", e.getMessage());
        if (e.field() != null) {
            err.put("field", e.field());
        }
        if (!e.eventIds().isEmpty()) { // the ids to retry with (the gateway may have made some)
            err.set("eventIds", JSON.valueToTree(e.eventIds()));
        }
        if (e.kind() == Kind.METHOD_NOT_ALLOWED) { // RFC 9110: a 405 says what the path takes
            response.putHeader("Allow", String.join(", ", GatewayOpenApi.DOCUMENT.methodsOf(request.path())));
        }
        if (e.kind() == Kind.BACKPRESSURE || e.kind() == Kind.UNAVAILABLE) {
            response.putHeader("Retry-After", "1");
        }
        response.setStatusCode(HttpErrors.status(e.kind()))
                .putHeader("Content-Type", "application/json")
                .end(JSON.createObjectNode().set("error", err).toString());
    }
}
