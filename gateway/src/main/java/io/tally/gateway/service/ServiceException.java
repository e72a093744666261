package io.tally.gateway.service;

/**
 * A request the gateway's services refuse, in Tally's error model (docs/design.md): a stable
 * code, a message for people, the field at fault when there is one, and what kind of refusal it
 * is. The HTTP layer maps the kind to a status in one place (HttpErrors); never a stack trace.
 */
public final class ServiceException extends RuntimeException {
    /** What kind of refusal (the HTTP layer's status for it in parentheses). */
    public enum Kind {
        /** The request is wrong and will stay wrong (400). */
        INVALID,
        /** Credentials are missing or wrong (401). */
        UNAUTHORIZED,
        /** What the request names does not exist (404). */
        NOT_FOUND,
        /** The endpoint takes another method (405). */
        METHOD_NOT_ALLOWED,
        /** It collides with what is there: a reused idempotency key, a stale version (409). */
        CONFLICT,
        /** Larger than a limit (413). */
        TOO_LARGE,
        /** Not JSON (415). */
        UNSUPPORTED_MEDIA_TYPE,
        /** Full right now; retry later (429). */
        BACKPRESSURE,
        /** A server it needs is down; retry (503). */
        UNAVAILABLE,
        /** A bug (500). */
        INTERNAL
    }

    private final ErrorCode code;
    private final String field;
    /** The event ids the refused write carried (ids the gateway made included), so a retry reuses them. */
    private java.util.List<String> eventIds = java.util.List.of();

    public ServiceException(ErrorCode code, String message, String field) {
        super(message, null, false, false);
        this.code = code;
        this.field = field;
    }

    public static ServiceException unavailable(ErrorCode code, String message) {
        return new ServiceException(code, message, null);
    }

    public Kind kind() {
        return code.kind();
    }

    public String code() {
        return code.name();
    }

    public ErrorCode errorCode() {
        return code;
    }

    public String field() {
        return field;
    }

    public java.util.List<String> eventIds() {
        return eventIds;
    }

    /** This refusal with the write's event ids (a 429, a 503 or a late refusal of a written batch). */
    public ServiceException withEventIds(java.util.List<String> ids) {
        this.eventIds = java.util.List.copyOf(ids);
        return this;
    }
}
