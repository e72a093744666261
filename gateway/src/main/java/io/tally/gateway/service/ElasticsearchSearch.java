package io.tally.gateway.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.common.ElasticsearchClientSecurity;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Elasticsearch's _search over HTTP; an unreachable or failing cluster is UNAVAILABLE (503).
 *
 * <p>A 503 from Elasticsearch is asked again after a short backoff, as its own REST client does:
 * a search that reaches a day's index in the tens of milliseconds between its creation (by the
 * writer's first bulk request) and its primary shard starting fails with "all shards failed", and
 * a moment later succeeds. A cluster that stays unavailable is still answered 503, a few hundred
 * milliseconds later.
 */
public final class ElasticsearchSearch implements EventSearchQueries.SearchBackend {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The waits before each retry of a 503: 350 ms in all, several times a shard's start here. */
    static final long[] RETRY_BACKOFF_MS = {50, 100, 200};

    private final String baseUrl;
    private final HttpClient http;
    private final String authorization;
    private final long[] backoffMs;

    public ElasticsearchSearch(String baseUrl, ElasticsearchClientSecurity security) {
        this(baseUrl, security, RETRY_BACKOFF_MS);
    }

    ElasticsearchSearch(String baseUrl, ElasticsearchClientSecurity security, long[] backoffMs) {
        this.baseUrl = baseUrl;
        this.http = security.configure(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)))
                .build();
        this.authorization = security.authorization();
        this.backoffMs = backoffMs.clone();
    }

    @Override
    public JsonNode search(String alias, ObjectNode request) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + "/" + alias + "/_search"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(request.toString()));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        HttpRequest req = b.build();
        try {
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
            for (int retry = 0; r.statusCode() == 503 && retry < backoffMs.length; retry++) {
                Thread.sleep(backoffMs[retry]); // a blocking handler's worker thread, not an event loop
                r = http.send(req, HttpResponse.BodyHandlers.ofString());
            }
            if (r.statusCode() == 404) {
                return JSON.createObjectNode(); // nothing indexed yet: no alias
            }
            if (r.statusCode() / 100 != 2) {
                // a 401 or 403 says the gateway's login is wrong: its log and the client are told so
                throw unavailable("Elasticsearch answered HTTP " + r.statusCode()
                        + (r.statusCode() == 401 || r.statusCode() == 403 ? " (check elasticsearch.username)" : ""));
            }
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw unavailable("Elasticsearch is unreachable: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw unavailable("interrupted");
        }
    }

    private static ServiceException unavailable(String message) {
        return new ServiceException(ErrorCode.ELASTICSEARCH_UNAVAILABLE, message, null);
    }
}
