package io.tally.jobs.elasticsearch;

import io.tally.common.ElasticsearchClientSecurity;
import io.tally.jobs.config.JobArgs;
import io.tally.jobs.config.JobSettings;
import java.io.Serializable;
import java.net.URI;
import org.apache.http.Header;
import org.apache.http.HttpHost;
import org.apache.http.message.BasicHeader;
import org.elasticsearch.client.RestClient;
import org.elasticsearch.client.RestClientBuilder;

/**
 * Where a job's Elasticsearch is and how it logs in: shipped to the TaskManagers with the
 * password's file, not the password. TLS is the URL's scheme; the admin calls and the document
 * sink check the node against the trust store setting (the JVM's CAs when it is empty).
 */
public record ElasticsearchEndpoint(String url, ElasticsearchClientSecurity security) implements Serializable {
    public static ElasticsearchEndpoint of(JobArgs args) {
        return new ElasticsearchEndpoint(
                args.text(JobSettings.ELASTICSEARCH_URL), ElasticsearchClientSecurity.from(args::byName));
    }

    /** Without a login, as a test's local node runs. */
    public static ElasticsearchEndpoint of(String url) {
        return new ElasticsearchEndpoint(url, ElasticsearchClientSecurity.NONE);
    }

    /** The document sink's client (low-level REST): the node, its login, its trust store; the caller closes it. */
    public RestClient restClient() {
        URI u = URI.create(url);
        RestClientBuilder b = RestClient.builder(new HttpHost(u.getHost(), u.getPort(), u.getScheme()));
        if (security.login()) {
            b.setDefaultHeaders(new Header[] {new BasicHeader("Authorization", security.authorization())});
        }
        if ("https".equalsIgnoreCase(u.getScheme())) {
            b.setHttpClientConfigCallback(h -> h.setSSLContext(security.sslContext()));
        }
        // the connector's client's timeouts: a bulk of a few MB on a busy node takes seconds
        b.setRequestConfigCallback(r -> r.setConnectTimeout(5_000).setSocketTimeout(60_000));
        return b.build();
    }
}
