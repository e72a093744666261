package io.tally.registry;

/** An answer in the Confluent error model: HTTP status, error_code, message. */
public final class RegistryError extends RuntimeException {
    private final int status;
    private final int errorCode;

    public RegistryError(int status, int errorCode, String message) {
        super(message);
        this.status = status;
        this.errorCode = errorCode;
    }

    public int status() {
        return status;
    }

    public int errorCode() {
        return errorCode;
    }

    static RegistryError subjectNotFound(String subject) {
        return new RegistryError(404, 40401, "Subject '" + subject + "' not found.");
    }

    static RegistryError versionNotFound(String subject, int version) {
        return new RegistryError(404, 40402, "Version " + version + " not found for subject '" + subject + "'.");
    }

    static RegistryError schemaNotFound(String what) {
        return new RegistryError(404, 40403, "Schema " + what + " not found");
    }

    static RegistryError invalidSchema(String message) {
        return new RegistryError(422, 42201, "Invalid schema: " + message);
    }

    static RegistryError invalidVersion(String version) {
        return new RegistryError(
                422,
                42202,
                "The specified version '" + version + "' is not a valid version id. "
                        + "Allowed values are between [1, 2^31-1] and the string \"latest\"");
    }

    static RegistryError invalidCompatibility(String level) {
        return new RegistryError(
                422,
                42203,
                "Invalid compatibility level '" + level + "'. Valid values are none, "
                        + "backward, forward, full, backward_transitive, forward_transitive, and full_transitive");
    }
}
