package io.tally.model.cassandra;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads Cassandra's refusal of a statement over a keyspace or table the node does not hold. The
 * gateway and the jobs both need to tell it from a failure: a namespace deleted meanwhile, a
 * slice table being made, a node just back that lags the cluster's schema. Its wording differs
 * by statement and version ("Keyspace 'x' doesn't exist", "keyspace x does not exist" for an
 * unlogged batch, "unconfigured table t", "table t does not exist"), so it lives in one place.
 * Pure text: the caller checks that the error is the driver's invalid-query refusal.
 */
public final class MissingSchemaRefusal {
    private static final Pattern MISSING = Pattern.compile(
            "keyspace '?([a-z0-9_]+)'? (?:does not|doesn't) exist"
                    + "|unconfigured table \\w+"
                    + "|table \\S+ (?:does not|doesn't) exist",
            Pattern.CASE_INSENSITIVE);

    /** What a refusal names when it names no keyspace (an unknown table's keyspace). */
    public static final String UNNAMED_KEYSPACE = "(a table's keyspace)";

    private MissingSchemaRefusal() {}

    /** Whether the message says the keyspace or table of the statement does not exist. */
    public static boolean saysMissing(String message) {
        return message != null && MISSING.matcher(message).find();
    }

    /**
     * The keyspace the refusal names (lower case, as Tally's keyspaces are), {@link
     * #UNNAMED_KEYSPACE} when it names only a table, null when the message is not such a refusal.
     */
    public static String keyspaceOf(String message) {
        if (message == null) {
            return null;
        }
        Matcher m = MISSING.matcher(message);
        if (!m.find()) {
            return null;
        }
        return m.group(1) != null ? m.group(1).toLowerCase(Locale.ROOT) : UNNAMED_KEYSPACE;
    }
}
