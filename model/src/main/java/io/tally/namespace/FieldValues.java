package io.tally.namespace;

import io.tally.namespace.NamespaceConfig.FieldType;

/**
 * An event item's value as the type its namespace's field_mapping gives it: the indexer
 * converts stored items with it and the search API converts query values the same way, so a
 * query means what was indexed. Returns null for text that is not of the type.
 */
public final class FieldValues {
    private FieldValues() {}

    public static Object convert(FieldType type, String text) {
        String t = text.trim();
        try {
            return switch (type) {
                case KEYWORD, TEXT, DATE -> t;
                case INTEGER, LONG -> Long.parseLong(t);
                case DOUBLE -> Double.parseDouble(t);
                case BOOLEAN -> t.equalsIgnoreCase("true")
                        ? Boolean.TRUE
                        : t.equalsIgnoreCase("false") ? Boolean.FALSE : null;
            };
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
