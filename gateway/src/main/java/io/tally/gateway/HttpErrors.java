package io.tally.gateway;

import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.ServiceException.Kind;

/** The one place a service's refusal becomes an HTTP status (shared DESIGN.md, "Errors"). */
final class HttpErrors {
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
        return new ServiceException(Kind.INTERNAL, "INTERNAL", "internal error", null);
    }
}
