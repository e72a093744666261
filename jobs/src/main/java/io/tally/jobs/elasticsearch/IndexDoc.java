package io.tally.jobs.elasticsearch;

import java.util.HashMap;
import java.util.Map;

/**
 * One event as an Elasticsearch document of its slice's index (the id is its idempotency key),
 * or, ahead of a namespace's documents, the index template they need ({@link #isTemplate}): the
 * step before the sink puts it, so the template is there before the first document that needs it.
 */
public class IndexDoc {
    /** The namespace it belongs to (its index template comes from that namespace's config). */
    public String namespace;

    public String index;
    public String id;
    public Map<String, Object> source = new HashMap<>();
    /** Set on a template marker only: the namespace's index template and mapping (JSON). */
    public String templateJson;

    public String mappingJson;

    public IndexDoc() {}

    /** The marker that carries a namespace config's index template. */
    public static IndexDoc templateOf(io.tally.namespace.NamespaceConfig ns) {
        IndexDoc d = new IndexDoc();
        d.namespace = ns.name();
        d.templateJson = IndexTemplates.template(ns);
        d.mappingJson = IndexTemplates.mapping(ns);
        return d;
    }

    public boolean isTemplate() {
        return templateJson != null;
    }
}
