package io.tally.namespace;

import io.tally.model.elasticsearch.IndexNames;

/**
 * A namespace name. It becomes part of a Cassandra keyspace ({@code ns_<name>}, dots as
 * underscores, at most 48 characters) and of Elasticsearch index names (lower case), so only
 * names safe in both are accepted: never quoted or escaped, simply rejected.
 */
public final class NamespaceName {
    public static final int MAX_LENGTH = 40;

    private NamespaceName() {}

    /**
     * [a-z][a-z0-9_.]{0,39}, without ".." and not ending in ".": checked a character at a time,
     * since every request names its namespace and the regular expression was a few per cent of a
     * GetCount's CPU in the gateway (NamespaceNameTest holds the two equal).
     */
    public static boolean isSafe(String name) {
        int n = name == null ? 0 : name.length();
        if (n == 0 || n > MAX_LENGTH || !lower(name.charAt(0)) || name.charAt(n - 1) == '.') {
            return false;
        }
        for (int i = 1; i < n; i++) {
            char c = name.charAt(i);
            if (c == '.' ? name.charAt(i - 1) == '.' : !(lower(c) || (c >= '0' && c <= '9') || c == '_')) {
                return false;
            }
        }
        return true;
    }

    private static boolean lower(char c) {
        return c >= 'a' && c <= 'z';
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
