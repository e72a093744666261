package io.tally.namespace;

/** A namespace config or name that is not acceptable; {@link #field()} names the offending key. */
public final class InvalidConfigException extends RuntimeException {
    private final String field;

    public InvalidConfigException(String field, String message) {
        super(field + ": " + message);
        this.field = field;
    }

    public String field() {
        return field;
    }
}
