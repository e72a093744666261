package io.tally.registry;

import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaCompatibility.Incompatibility;
import org.apache.avro.SchemaCompatibility.SchemaCompatibilityResult;

/** Checks a new Avro schema against earlier versions under a compatibility level. */
public final class CompatibilityChecker {
    private CompatibilityChecker() {}

    /** One earlier version of the subject. */
    public record Earlier(int version, Schema schema) {}

    /**
     * @param earlier the subject's live versions, oldest first
     * @return the incompatibilities found, each a readable sentence; empty when compatible
     */
    public static List<String> check(CompatibilityLevel level, Schema candidate, List<Earlier> earlier) {
        List<String> problems = new ArrayList<>();
        if (level == CompatibilityLevel.NONE || earlier.isEmpty()) {
            return problems;
        }
        List<Earlier> against = level.transitive ? earlier : List.of(earlier.get(earlier.size() - 1));
        for (Earlier e : against) {
            if (level.newReadsOld) {
                describe(
                        SchemaCompatibility.checkReaderWriterCompatibility(candidate, e.schema())
                                .getResult(),
                        "the new schema cannot read data written with version " + e.version(),
                        problems);
            }
            if (level.oldReadsNew) {
                describe(
                        SchemaCompatibility.checkReaderWriterCompatibility(e.schema(), candidate)
                                .getResult(),
                        "version " + e.version() + " cannot read data written with the new schema",
                        problems);
            }
        }
        return problems;
    }

    private static void describe(SchemaCompatibilityResult result, String direction, List<String> out) {
        for (Incompatibility i : result.getIncompatibilities()) {
            out.add("{errorType:'" + i.getType() + "', description:'" + direction + ": " + i.getMessage()
                    + "', additionalInfo:'" + i.getLocation() + "'}");
        }
    }
}
