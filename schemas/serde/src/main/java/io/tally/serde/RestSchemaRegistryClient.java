package io.tally.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;

/**
 * A schema registry client over the Confluent REST API. Registrations and lookups are
 * cached per (subject, schema) and schemas per id: ids are immutable, so after the first
 * call a record costs a map lookup, not a round trip.
 */
public final class RestSchemaRegistryClient implements SchemaRegistryClient {
    private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final HttpClient http;
    private final Duration timeout;
    /** Sent as a Bearer token with every call (registry writes need it); null: none. */
    private final String adminToken;

    private final Map<String, Map<Schema, Integer>> idsBySubject = new ConcurrentHashMap<>();
    private final Map<Integer, Schema> schemasById = new ConcurrentHashMap<>();

    public RestSchemaRegistryClient(String baseUrl) {
        this(baseUrl, Duration.ofSeconds(10));
    }

    public RestSchemaRegistryClient(String baseUrl, Duration timeout) {
        this(baseUrl, timeout, null);
    }

    /** @param adminToken the registry's admin token, for a client that registers (null or empty: none) */
    public RestSchemaRegistryClient(String baseUrl, Duration timeout, String adminToken) {
        this.base = URI.create(baseUrl.endsWith("/") ? baseUrl : baseUrl + "/");
        this.timeout = timeout;
        this.adminToken = adminToken == null || adminToken.isEmpty() ? null : adminToken;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
    }

    @Override
    public int register(String subject, Schema schema) {
        Map<Schema, Integer> ids = idsBySubject.get(subject);
        Integer cached = ids == null ? null : ids.get(schema);
        if (cached != null) {
            return cached; // the hot path: no allocation, no lock
        }
        return idsBySubject
                .computeIfAbsent(subject, s -> new ConcurrentHashMap<>())
                .computeIfAbsent(schema, s -> {
                    JsonNode r = call("POST", "subjects/" + enc(subject) + "/versions", body(s));
                    int id = r.get("id").asInt();
                    schemasById.putIfAbsent(id, s);
                    return id;
                });
    }

    @Override
    public int lookup(String subject, Schema schema) {
        Integer cached = idsBySubject.getOrDefault(subject, Map.of()).get(schema);
        if (cached != null) {
            return cached;
        }
        int id =
                call("POST", "subjects/" + enc(subject), body(schema)).get("id").asInt();
        idsBySubject.computeIfAbsent(subject, s -> new ConcurrentHashMap<>()).put(schema, id);
        return id;
    }

    @Override
    public Schema schemaById(int id) {
        Schema cached = schemasById.get(id);
        if (cached != null) {
            return cached;
        }
        return schemasById.computeIfAbsent(id, i -> {
            JsonNode r = call("GET", "schemas/ids/" + i, null);
            try {
                return new Schema.Parser().parse(r.get("schema").asText());
            } catch (RuntimeException e) {
                throw new SerdeException("schema id " + i + " from the registry does not parse: " + e.getMessage(), e);
            }
        });
    }

    @Override
    public Registered latest(String subject) {
        JsonNode r = call("GET", "subjects/" + enc(subject) + "/versions/latest", null);
        int id = r.get("id").asInt();
        Schema schema = schemaById(id); // one parsed instance per id, shared with the readers
        idsBySubject.computeIfAbsent(subject, s -> new ConcurrentHashMap<>()).put(schema, id);
        return new Registered(id, schema);
    }

    private static String body(Schema schema) {
        return JSON.createObjectNode().put("schema", schema.toString()).toString();
    }

    private JsonNode call(String method, String path, String body) {
        HttpRequest.Builder req =
                HttpRequest.newBuilder(base.resolve(path)).timeout(timeout).header("Accept", CONTENT_TYPE);
        if (adminToken != null) {
            req.header("Authorization", "Bearer " + adminToken);
        }
        if (body != null) {
            req.header("Content-Type", CONTENT_TYPE).method(method, HttpRequest.BodyPublishers.ofString(body));
        } else {
            req.method(method, HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<String> resp;
        try {
            resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new RegistryUnavailableException(
                    "schema registry at " + base + " is unreachable: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SerdeException("interrupted while calling the schema registry", e);
        }
        if (resp.statusCode() >= 500) {
            throw new RegistryUnavailableException(
                    "schema registry at " + base + " answered HTTP " + resp.statusCode() + ": " + resp.body(), null);
        }
        JsonNode json;
        try {
            json = JSON.readTree(resp.body());
        } catch (IOException e) {
            throw new SerdeException(
                    "schema registry answered HTTP " + resp.statusCode() + " with a body that is not JSON");
        }
        if (resp.statusCode() / 100 != 2) {
            int code = json.path("error_code").asInt(resp.statusCode());
            throw new RegistryException(
                    resp.statusCode(), code, json.path("message").asText("(no message)"));
        }
        return json;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
