package io.tally.gateway;

/**
 * A rejected request in the gateway's error model (shared DESIGN.md):
 * {@code {"error": {"code", "message", "field"}}} with its HTTP status. Never a stack trace.
 */
public final class ApiError extends RuntimeException {
    private final int status;
    private final String code;
    private final String field;

    public ApiError(int status, String code, String message, String field) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
        this.field = field;
    }

    public static ApiError badRequest(String code, String message, String field) {
        return new ApiError(400, code, message, field);
    }

    public static ApiError tooLarge(String code, String message, String field) {
        return new ApiError(413, code, message, field);
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    public String field() {
        return field;
    }
}
