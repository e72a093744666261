package io.tally.gateway.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Elasticsearch's _search over HTTP; an unreachable or failing cluster is UNAVAILABLE (503). */
public final class ElasticsearchSearch implements EventSearchQueries.SearchBackend {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String baseUrl;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    public ElasticsearchSearch(String baseUrl) {
        this.baseUrl = baseUrl;
    }

    @Override
    public JsonNode search(String alias, ObjectNode request) {
        HttpRequest req = HttpRequest.newBuilder(URI.create(baseUrl + "/" + alias + "/_search"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(request.toString()))
                .build();
        try {
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 404) {
                return JSON.createObjectNode(); // nothing indexed yet: no alias
            }
            if (r.statusCode() / 100 != 2) {
                throw unavailable("Elasticsearch answered HTTP " + r.statusCode());
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
