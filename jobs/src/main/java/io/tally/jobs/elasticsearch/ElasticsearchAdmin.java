package io.tally.jobs.elasticsearch;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Index administration on Elasticsearch's REST API (templates, mappings, creating and deleting
 * indices): one client and one rule for when a call is done. Paths are made of namespace and
 * slice names, which were validated as safe index parts, never of raw input.
 */
public final class ElasticsearchAdmin {
    // one per admin, never static: a static client's selector thread (a GC root whose context
    // class loader is the job's) would keep every upgraded job's classes loaded forever
    private final HttpClient http;
    private final String url;
    private final String authorization;

    public ElasticsearchAdmin(ElasticsearchEndpoint endpoint) {
        this.http = endpoint.security()
                .configure(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)))
                .build();
        this.url = endpoint.url();
        this.authorization = endpoint.security().authorization();
    }

    /** Creates or replaces what `path` names. */
    public void put(String path, String body) throws IOException, InterruptedException {
        call("PUT", path, body, false, false);
    }

    /** Creates what `path` names; done too when it already exists (an index, say). */
    public void create(String path, String body) throws IOException, InterruptedException {
        call("PUT", path, body, false, true);
    }

    /** Applies to what a wildcard path matches; done too when it matches nothing yet. */
    public void putOnExisting(String path, String body) throws IOException, InterruptedException {
        call("PUT", path, body, true, false);
    }

    /** Deletes what `path` names; done too when it is gone already. */
    public void delete(String path) throws IOException, InterruptedException {
        call("DELETE", path, null, true, false);
    }

    private void call(String method, String path, String body, boolean missingIsDone, boolean existingIsDone)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url + path))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        int status = r.statusCode();
        boolean done = status / 100 == 2
                || (missingIsDone && status == 404)
                || (existingIsDone && status == 400 && r.body().contains("resource_already_exists_exception"));
        if (!done) {
            throw new IllegalStateException(method + " " + path + ": HTTP " + status + " " + r.body());
        }
    }
}
