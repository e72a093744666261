package io.tally.jobs.timeseries;

import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Puts each indexed namespace's composable index template (idempotent PUT), so every slice
 * index tally-&lt;ns&gt;-&lt;slice&gt; is created on its first document with the namespace's
 * field_mapping and joins the alias tally-&lt;ns&gt;. Namespace names were validated as safe index parts.
 */
final class IndexTemplates {
    private IndexTemplates() {}

    static void ensureAll(String elasticsearchUrl, NamespaceCatalog catalog) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        for (NamespaceConfig ns : catalog.all()) {
            if (ns.kind() != NamespaceConfig.Kind.TIMESERIES || !ns.index().enabled()) {
                continue;
            }
            HttpRequest put = HttpRequest.newBuilder(URI.create(elasticsearchUrl + "/_index_template/tally-" + ns.name()))
                    .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                    .PUT(HttpRequest.BodyPublishers.ofString(IndexDocs.template(ns))).build();
            HttpResponse<String> r = http.send(put, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() / 100 != 2) {
                throw new IOException("index template for " + ns.name() + ": HTTP " + r.statusCode() + " " + r.body());
            }
        }
    }
}
