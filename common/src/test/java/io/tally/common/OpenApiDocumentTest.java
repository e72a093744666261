package io.tally.common;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** The unknown-field check of request bodies, and the methods a path takes, from a small document. */
class OpenApiDocumentTest {
    private static final OpenApiDocument DOC = OpenApiDocument.load(OpenApiDocumentTest.class, "test-openapi.json");

    private static String unknown(String json) throws Exception {
        JsonNode body = new ObjectMapper().readTree(json.replace('\'', '"'));
        return DOC.unknownField("POST", "/v1/write", body);
    }

    @Test
    void aBodyOfDocumentedFieldsHasNoUnknownField() throws Exception {
        assertThat(unknown("{'namespace': 'n', 'events': [{'eventId': 'a', 'eventItems': [{'eventItemKey': 'k'}]}],"
                        + " 'token': {'token': 't'}, 'labels': {'any': 'x'}, 'free': {'a': {'b': 1}}}"))
                .isNull();
        assertThat(unknown("{'token': null}")).isNull();
    }

    @Test
    void anUnknownFieldIsNamedByItsPathAtAnyDepth() throws Exception {
        assertThat(unknown("{'namspace': 'n'}")).isEqualTo("namspace");
        assertThat(unknown("{'events': [{'eventId': 'a'}, {'eventID': 'b'}]}")).isEqualTo("events[1].eventID");
        assertThat(unknown("{'events': [{'eventItems': [{}, {'eventItemValue': 'v'}]}]}"))
                .isEqualTo("events[0].eventItems[1].eventItemValue");
        assertThat(unknown("{'token': {'tokn': 't'}}")).isEqualTo("token.tokn");
    }

    @Test
    void aRouteWithoutADocumentedBodyChecksNothing() throws Exception {
        JsonNode body = new ObjectMapper().readTree("{\"anything\": 1}");
        assertThat(DOC.unknownField("POST", "/v1/things/:name", body)).isNull();
        assertThat(DOC.unknownField("PUT", "/v1/write", body)).isNull();
    }

    @Test
    void aPathsMethodsAreItsDocumentedOnes() {
        assertThat(DOC.methodsOf("/v1/things/playback")).containsExactly("GET", "PUT");
        assertThat(DOC.methodsOf("/v1/nothing")).isEmpty();
        assertThat(OpenApiDocument.routerPath("/v1/things/{name}")).isEqualTo("/v1/things/:name");
    }
}
