package io.tally.serde;

/**
 * The schema registry could not answer (unreachable, or a 5xx): nothing is wrong with the record,
 * so a consumer retries it (a job fails and restarts from its checkpoint) instead of
 * dead-lettering it as undecodable.
 */
public class RegistryUnavailableException extends SerdeException {
    public RegistryUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
