package io.tally.model.cassandra;

import java.util.regex.Pattern;

/**
 * CQL identifiers cannot be bind markers, so keyspace and table names are written into
 * statements. They are only ever made from names that passed
 * {@link io.tally.namespace.NamespaceName} or from the planner's digits, and are checked
 * again here before they reach a statement; values are always bound.
 */
public final class CqlNames {
    private static final Pattern IDENTIFIER = Pattern.compile("[a-z][a-z0-9_]{0,47}");

    private CqlNames() {}

    /** @throws IllegalArgumentException when s is not a safe unquoted CQL identifier */
    public static String identifier(String s) {
        if (s == null || !IDENTIFIER.matcher(s).matches()) {
            throw new IllegalArgumentException("'" + s + "' is not a safe CQL identifier");
        }
        return s;
    }

    static String qualified(String keyspace, String table) {
        return identifier(keyspace) + "." + identifier(table);
    }
}
