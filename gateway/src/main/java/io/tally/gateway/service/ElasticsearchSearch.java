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

/** Elasticsearch's _search over HTTP; an unreachable or failing cluster is UNAVAILABLE (503). */
public final class ElasticsearchSearch implements EventSearchQueries.SearchBackend {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String baseUrl;
    private final HttpClient http;
    private final String authorization;

    public ElasticsearchSearch(String baseUrl, ElasticsearchClientSecurity security) {
        this.baseUrl = baseUrl;
        this.http = security.configure(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)))
                .build();
        this.authorization = security.authorization();
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
