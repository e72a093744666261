package io.tally.namespace;

import io.tally.model.elasticsearch.IndexNames;
import java.util.regex.Pattern;

/**
 * A namespace name. It becomes part of a Cassandra keyspace ({@code ns_<name>}, dots as
 * underscores, at most 48 characters) and of Elasticsearch index names (lower case), so only
 * names safe in both are accepted: never quoted or escaped, simply rejected.
 */
public final class NamespaceName {
    public static final int MAX_LENGTH = 40;
    private static final Pattern SAFE = Pattern.compile("[a-z][a-z0-9_.]{0,39}");

    private NamespaceName() {}

    public static boolean isSafe(String name) {
        return name != null && SAFE.matcher(name).matches() && !name.contains("..") && !name.endsWith(".");
    }

    /** @throws InvalidConfigException naming field when the name is unsafe */
    public static String require(String name, String field) {
        if (!isSafe(name)) {
            throw new InvalidConfigException(
                    field,
                    "'" + abbreviate(name) + "' is not a valid namespace name: use 1-" + MAX_LENGTH
                            + " lower-case letters, digits, '_' and '.', starting with a letter");
        }
        return name;
    }

    /** The Cassandra keyspace of a namespace (docs/design.md: ns_<name>, dots mapped to '_'). */
    public static String keyspace(String name) {
        return "ns_" + require(name, "namespace").replace('.', '_');
    }

    /** The Elasticsearch alias of a namespace. */
    public static String indexAlias(String name) {
        return IndexNames.alias(require(name, "namespace"));
    }

    private static String abbreviate(String s) {
        if (s == null) {
            return "null";
        }
        return s.length() > 60 ? s.substring(0, 60) + "..." : s;
    }
}
