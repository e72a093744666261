package io.tally.jobs.kafka;

import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceConfig;
import io.tally.serde.AvroSerde;
import io.tally.serde.SerdeException;
import java.util.function.Consumer;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;

/**
 * The first steps every writer job takes with a raw record: decode it with the shared serde
 * (resolved to the job's schema) and find its namespace of the expected kind; what fails goes
 * to the dead letter as UNDECODABLE, UNKNOWN_NAMESPACE or WRONG_NAMESPACE_KIND.
 */
public final class NamespacedRecords {
    private NamespacedRecords() {}

    /** A record that passed: its value and its namespace's config. */
    public record Decoded(GenericRecord value, NamespaceConfig namespace) {}

    /** The decoded record, or null after handing a dead letter to deadLetters. */
    public static Decoded decode(RawRecord in, AvroSerde serde, Schema schema, NamespaceCatalog catalog,
                                 NamespaceConfig.Kind kind, String stage, Consumer<DeadLetterRecord> deadLetters) {
        GenericRecord e;
        try {
            e = serde.deserialize(in.value, schema);
        } catch (SerdeException ex) {
            deadLetters.accept(new DeadLetterRecord(in, "UNDECODABLE", ex.getMessage(), stage));
            return null;
        }
        String name = e.get("namespace").toString();
        NamespaceConfig ns = catalog.get(name).orElse(null);
        if (ns == null) {
            deadLetters.accept(new DeadLetterRecord(in, "UNKNOWN_NAMESPACE", "namespace '" + name + "' does not exist", stage));
            return null;
        }
        if (ns.kind() != kind) {
            deadLetters.accept(new DeadLetterRecord(in, "WRONG_NAMESPACE_KIND",
                    "namespace '" + name + "' is not a " + kind.name().toLowerCase() + " namespace", stage));
            return null;
        }
        return new Decoded(e, ns);
    }
}
