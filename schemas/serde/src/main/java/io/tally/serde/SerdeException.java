package io.tally.serde;

/** A record that cannot be encoded or decoded; the message says why in words a user can act on. */
public class SerdeException extends RuntimeException {
    public SerdeException(String message) {
        super(message);
    }

    public SerdeException(String message, Throwable cause) {
        super(message, cause);
    }
}
