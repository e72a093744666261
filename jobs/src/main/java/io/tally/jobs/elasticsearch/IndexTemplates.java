package io.tally.jobs.elasticsearch;

import io.tally.model.elasticsearch.DocumentFields;
import io.tally.model.elasticsearch.IndexNames;
import io.tally.namespace.NamespaceConfig;
import org.slf4j.LoggerFactory;

/**
 * A namespace's Elasticsearch layout: the composable index template its slice indices are made
 * from (mapping of its field_mapping plus the fixed fields, settings, alias) and the mapping put
 * on the indices that exist already.
 */
public final class IndexTemplates {
    private IndexTemplates() {}

    /**
     * Makes Elasticsearch ready for a namespace's config (idempotent; names were validated as
     * safe index parts): its index template, for the slice indices to come, and its field_mapping
     * on the indices that exist (new fields are added; a changed type Elasticsearch refuses is
     * logged and applies from the next slice's index, made from the template).
     */
    public static void put(ElasticsearchAdmin elasticsearch, NamespaceConfig ns) throws Exception {
        put(elasticsearch, ns.name(), template(ns), mapping(ns));
        // the refresh interval is dynamic: a change reaches the slices' indices at once
        elasticsearch.putOnExisting(
                "/" + IndexNames.pattern(ns.name()) + "/_settings",
                "{\"index\":{\"refresh_interval\":" + refreshSetting(ns) + "}}");
    }

    /**
     * Elasticsearch's own default (1 s) is left unset (null), since only then does a shard that
     * nobody searched for 30 s skip its scheduled refreshes (index.search.idle.after): an
     * unsearched index then writes no segment a second and merges none, and the first search
     * waits for one refresh, so it still sees every document indexed before it. Any other
     * interval is set as asked.
     */
    static String refreshSetting(NamespaceConfig ns) {
        long ms = ns.index().refreshInterval().toMillis();
        return ms == ELASTICSEARCH_DEFAULT_REFRESH_MS ? "null" : "\"" + ms + "ms\"";
    }

    static final long ELASTICSEARCH_DEFAULT_REFRESH_MS = 1000;

    /** The same, from a template and a mapping made by {@link #template} and {@link #mapping}. */
    public static void put(ElasticsearchAdmin elasticsearch, String namespace, String template, String mapping)
            throws Exception {
        elasticsearch.put("/_index_template/" + IndexNames.template(namespace), template);
        try {
            elasticsearch.putOnExisting("/" + IndexNames.pattern(namespace) + "/_mapping", mapping);
        } catch (IllegalStateException e) {
            LoggerFactory.getLogger(IndexTemplates.class)
                    .warn("field_mapping of {} reaches existing indices only partly: {}", namespace, e.getMessage());
        }
    }

    /** The mapping of a namespace's indices: the fixed fields and its field_mapping. */
    public static String mapping(NamespaceConfig ns) {
        return "{\"dynamic\":false,\"properties\":{" + properties(ns) + "}}";
    }

    private static String properties(NamespaceConfig ns) {
        StringBuilder props = new StringBuilder("\"" + DocumentFields.TIME_SERIES_ID + "\":{\"type\":\"keyword\"},"
                + "\"" + DocumentFields.EVENT_TIME + "\":{\"type\":\"date\",\"format\":\"epoch_millis\"},"
                + "\"" + DocumentFields.EVENT_TIME_US + "\":{\"type\":\"long\"},"
                + "\"" + DocumentFields.EVENT_ID + "\":{\"type\":\"keyword\"}");
        ns.index().fieldMapping().forEach((field, type) -> props.append(",\"")
                .append(field)
                .append("\":{\"type\":\"")
                .append(type.name().toLowerCase())
                .append("\"}"));
        return props.toString();
    }

    /** The composable index template of a namespace: mapping, settings and its alias. */
    public static String template(NamespaceConfig ns) {
        String refresh = refreshSetting(ns); // JSON null: Elasticsearch's default, left unset
        return "{\"index_patterns\":[\"" + IndexNames.pattern(ns.name()) + "\"],\"priority\":100,\"template\":{"
                // ignore_malformed: a value the indexer's checks let through by mistake costs that
                // field of one document, not the job (Elasticsearch would refuse the document whole).
                + "\"settings\":{\"number_of_shards\":1,\"number_of_replicas\":0,"
                + (refresh.equals("null") ? "" : "\"refresh_interval\":" + refresh + ",")
                + "\"index.mapping.ignore_malformed\":true},"
                + "\"mappings\":{\"dynamic\":false,\"properties\":{" + properties(ns) + "}},"
                + "\"aliases\":{\"" + IndexNames.alias(ns.name()) + "\":{}}}}";
    }
}
