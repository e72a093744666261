package io.tally.model.elasticsearch;

/**
 * Elasticsearch names of a namespace (docs/design.md, "Search"): one index per slice,
 * {@code tally-<ns>-<slice start>}, behind the alias {@code tally-<ns>}, with one index template
 * per namespace. Callers pass names that passed NamespaceName (lower case, no '*', ',' or spaces).
 */
public final class IndexNames {
    public static final String PREFIX = "tally-";

    private IndexNames() {}

    /** The alias that every slice index of a namespace is behind; queries go here. */
    public static String alias(String namespace) {
        return PREFIX + namespace;
    }

    /** The index of the slice whose start is written as suffix (the same as its table's). */
    public static String sliceIndex(String namespace, String suffix) {
        return PREFIX + namespace + "-" + suffix;
    }

    /** The pattern that matches every slice index of a namespace (its template's index_patterns). */
    public static String pattern(String namespace) {
        return PREFIX + namespace + "-*";
    }

    /** The name of the namespace's index template. */
    public static String template(String namespace) {
        return PREFIX + namespace;
    }
}
