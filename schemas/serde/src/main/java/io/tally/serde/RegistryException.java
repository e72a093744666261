package io.tally.serde;

/** An error answer from the schema registry, with its HTTP status and Confluent error code. */
public class RegistryException extends SerdeException {
    private final int status;
    private final int errorCode;

    public RegistryException(int status, int errorCode, String message) {
        super("schema registry: " + message + " (HTTP " + status + ", error_code " + errorCode + ")");
        this.status = status;
        this.errorCode = errorCode;
    }

    public int status() {
        return status;
    }

    public int errorCode() {
        return errorCode;
    }
}
