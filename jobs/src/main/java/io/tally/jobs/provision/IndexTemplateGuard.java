package io.tally.jobs.provision;

import io.tally.jobs.elasticsearch.ElasticsearchAdmin;
import io.tally.jobs.elasticsearch.ElasticsearchEndpoint;
import io.tally.jobs.elasticsearch.IndexDoc;
import io.tally.jobs.elasticsearch.IndexTemplates;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The step before the Elasticsearch sink. The decode step sends, ahead of the first document of
 * each namespace config it meets, a template marker ({@link IndexDoc#templateOf}); this step puts
 * that template and mapping before it passes on the documents behind it, in order on the same
 * channel. Elasticsearch creates a slice index on its first document, and only a template present
 * then gives it the mapping and the alias, and a field is only indexed once mapped; the
 * provisioner does this too, but on its own tick, beside the writer, not before it. A failure is
 * logged and the documents go on (the provisioner retries). Kept out of the decode step, so a slow
 * Elasticsearch never holds up the Cassandra path.
 */
public class IndexTemplateGuard extends ProcessFunction<IndexDoc, IndexDoc> {
    private static final Logger LOG = LoggerFactory.getLogger(IndexTemplateGuard.class);
    private final ElasticsearchEndpoint elasticsearch;
    private transient ElasticsearchAdmin es;
    /** The template last put per namespace by this instance. */
    private transient Map<String, String> put;

    /** @param elasticsearch Elasticsearch; null drops the markers untouched (a test without Elasticsearch) */
    public IndexTemplateGuard(ElasticsearchEndpoint elasticsearch) {
        this.elasticsearch = elasticsearch;
    }

    @Override
    public void open(OpenContext ctx) {
        es = elasticsearch == null ? null : new ElasticsearchAdmin(elasticsearch);
        put = new HashMap<>();
    }

    @Override
    public void processElement(IndexDoc doc, Context ctx, Collector<IndexDoc> out) throws Exception {
        if (!doc.isTemplate()) {
            out.collect(doc);
            return;
        }
        if (es == null || (doc.templateJson + doc.mappingJson).equals(put.get(doc.namespace))) {
            return;
        }
        try {
            IndexTemplates.put(es, doc.namespace, doc.templateJson, doc.mappingJson);
            put.put(doc.namespace, doc.templateJson + doc.mappingJson);
        } catch (Exception e) {
            LOG.warn("index template of {}: {}", doc.namespace, e.toString());
        }
    }
}
