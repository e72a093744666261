package io.tally.serde;

import org.apache.avro.Schema;

/** What the serde needs from a Confluent-compatible schema registry. */
public interface SchemaRegistryClient {
    /** Registers schema under subject (idempotent) and returns its global id. */
    int register(String subject, Schema schema);

    /** The schema with this global id; throws {@link RegistryException} (40403) when unknown. */
    Schema schemaById(int id);

    /** The id of schema under subject, if it is registered there, without registering it. */
    int lookup(String subject, Schema schema);

    /**
     * The newest live version of subject: its global id and schema (a table format writes with
     * it). Throws {@link RegistryException} (40401) when the subject has none.
     */
    default Registered latest(String subject) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not read subjects' versions");
    }

    /** A schema as the registry holds it under a subject. */
    record Registered(int id, Schema schema) {}
}
