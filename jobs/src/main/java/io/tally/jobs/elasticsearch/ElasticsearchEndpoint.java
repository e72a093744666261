package io.tally.jobs.elasticsearch;

import io.tally.common.ElasticsearchClientSecurity;
import io.tally.jobs.config.JobArgs;
import io.tally.jobs.config.JobSettings;
import java.io.Serializable;
import java.net.URI;
import org.apache.flink.connector.elasticsearch.sink.ElasticsearchSinkBuilderBase;
import org.apache.http.HttpHost;

/**
 * Where a job's Elasticsearch is and how it logs in: shipped to the TaskManagers with the
 * password's file, not the password. TLS is the URL's scheme; the admin calls check the node
 * against the trust store setting, the document sink (the connector's client, which takes no
 * TLS context) against the TaskManager JVM's default trust store.
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

    /** The sink's hosts and login. */
    public <B extends ElasticsearchSinkBuilderBase<?, B>> B configure(B builder) {
        URI u = URI.create(url);
        builder.setHosts(new HttpHost(u.getHost(), u.getPort(), u.getScheme()));
        if (security.login()) {
            builder.setConnectionUsername(security.username()).setConnectionPassword(security.password());
        }
        return builder;
    }
}
