package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.tally.common.OpenApiDocument;
import io.tally.gateway.service.ErrorCode;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Route;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document against the code: the same routes and methods, the same error codes with
 * the same statuses, and every request body closed (additionalProperties: false), so the
 * gateway's unknown-field check covers each. That the code reads every documented field is
 * proved on the running stack (test_api_contract.py), field by field.
 */
class GatewayOpenApiTest {
    static final JsonNode DOC = GatewayOpenApi.DOCUMENT.root();
    static Vertx vertx;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() {
        vertx.close();
    }

    @Test
    void the_document_and_the_router_have_the_same_routes_and_methods() throws Exception {
        Set<String> routed = new TreeSet<>();
        for (Route route : GatewayHttpApiTest.testApi().router(vertx).getRoutes()) {
            if (route.getPath() == null) {
                continue; // the handlers every request passes (timing, body, not-found, failure)
            }
            Set<HttpMethod> methods = route.methods();
            if (methods == null || methods.isEmpty()) {
                routed.add("POST " + route.getPath()); // the write endpoints: POST, 405 for the rest
            } else {
                methods.forEach(m -> routed.add(m.name() + " " + route.getPath()));
            }
        }
        Set<String> documented = new TreeSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = DOC.get("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> p = paths.next();
            p.getValue().fieldNames().forEachRemaining(m -> {
                if (!m.equals("parameters")) {
                    documented.add(m.toUpperCase() + " " + OpenApiDocument.routerPath(p.getKey()));
                }
            });
        }
        assertThat(documented).isEqualTo(routed);
    }

    @Test
    void the_document_lists_every_error_code_with_its_status() {
        Map<String, Integer> code = new TreeMap<>();
        for (ErrorCode c : ErrorCode.values()) {
            code.put(c.name(), HttpErrors.status(c.kind()));
        }
        JsonNode schema = DOC.at("/components/schemas/ErrorCode");
        Map<String, Integer> documented = new TreeMap<>();
        schema.get("x-tally-status")
                .fields()
                .forEachRemaining(e -> documented.put(e.getKey(), e.getValue().asInt()));
        Set<String> listed = new TreeSet<>();
        schema.get("enum").forEach(v -> listed.add(v.asText()));
        assertThat(documented).isEqualTo(code);
        assertThat(listed).isEqualTo(code.keySet());
    }

    @Test
    void every_status_a_code_comes_with_is_documented_where_that_code_can_occur() {
        // each data-plane POST documents 400, 404, 413, 415, 429, 500 and 503 (the refusals any of them can give)
        DOC.get("paths").fields().forEachRemaining(p -> {
            JsonNode post = p.getValue().get("post");
            if (post != null) {
                assertThat(post.get("responses").fieldNames())
                        .toIterable()
                        .as(p.getKey())
                        .contains("400", "404", "413", "415", "429", "500", "503");
            }
        });
    }

    @Test
    void every_request_body_object_is_closed_so_unknown_fields_are_refused() {
        Set<String> open = new TreeSet<>();
        DOC.at("/components/schemas").fields().forEachRemaining(s -> {
            JsonNode schema = s.getValue();
            if (schema.path("type").asText().equals("object")
                    && schema.has("properties")
                    && !schema.path("additionalProperties").isBoolean()) {
                open.add(s.getKey());
            }
        });
        assertThat(open).as("object schemas with additionalProperties unset").containsOnly("Health");
    }

    @Test
    void a_path_s_methods_come_from_the_document_for_the_allow_header_of_a_405() {
        assertThat(GatewayOpenApi.DOCUMENT.methodsOf("/v1/namespaces/playback"))
                .containsExactly("DELETE", "GET", "PUT");
        assertThat(GatewayOpenApi.DOCUMENT.methodsOf("/v1/counter/GetCount")).containsExactly("POST");
        assertThat(GatewayOpenApi.DOCUMENT.methodsOf("/v1/namespaces/a/b")).isEmpty();
        assertThat(GatewayOpenApi.DOCUMENT.methodsOf("/nope")).isEmpty();
    }

    @Test
    void unknown_fields_are_found_at_any_depth_with_their_path() throws Exception {
        JsonNode body = GatewayHttpApiTest.JSON.readTree(
                "{\"namespace\":\"playback\",\"events\":[{\"timeSeriesId\":\"a\",\"eventTime\":\"t\","
                        + "\"eventItems\":[{\"eventItemKey\":\"k\",\"eventItemValue\":\"aQ==\"},"
                        + "{\"eventItemKey\":\"k\",\"eventItemValue\":\"aQ==\",\"tpye\":1}]}]}");
        assertThat(GatewayOpenApi.DOCUMENT.unknownField("POST", "/v1/timeseries/WriteEventRecords", body))
                .isEqualTo("events[0].eventItems[1].tpye");
        JsonNode query = GatewayHttpApiTest.JSON.readTree("{\"namespace\":\"playback\",\"timeInterval\":{},"
                + "\"searchQuery\":{\"booleanQuery\":{\"searchQuery\":[{\"equals\":{\"eventItemKey\":\"k\","
                + "\"eventItemValue\":\"aQ==\",\"boost\":2}}]}}}");
        assertThat(GatewayOpenApi.DOCUMENT.unknownField("POST", "/v1/timeseries/SearchEventRecords", query))
                .isEqualTo("searchQuery.booleanQuery.searchQuery[0].equals.boost");
        assertThat(GatewayOpenApi.DOCUMENT.unknownField(
                        "POST", "/v1/counter/GetCount", GatewayHttpApiTest.JSON.readTree("{\"namespace\":\"n\"}")))
                .isNull();
    }
}
