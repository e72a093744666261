package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.service.CassandraSession;
import io.tally.gateway.service.CounterQueries;
import io.tally.gateway.service.CounterRecount;
import io.tally.gateway.service.EventSearchQueries;
import io.tally.gateway.service.IdempotencyCache;
import io.tally.gateway.service.NamespaceAdmin;
import io.tally.gateway.service.NamespaceResolver;
import io.tally.gateway.service.NamespaceStore;
import io.tally.gateway.service.PageTokens;
import io.tally.gateway.service.TimeSeriesQueries;
import io.tally.gateway.service.WriteService;
import io.tally.namespace.NamespaceCatalog;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The HTTP layer on a real Vert.x server (a free port) with the seed namespaces and a sink that
 * acknowledges at once: for each endpoint, bad input gets its status, code and field, and no
 * record reaches the sink. No Kafka, Cassandra or Elasticsearch is involved: everything here is
 * refused before any of them would be asked.
 */
class GatewayHttpApiTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static Vertx vertx;
    static HttpServer server;
    static int sent;

    @BeforeAll
    static void start() throws Exception {
        GatewayHttpApi api = testApi();
        vertx = Vertx.vertx();
        server = vertx.createHttpServer()
                .requestHandler(api.requestHandler(vertx))
                .listen(0, "127.0.0.1")
                .toCompletionStage()
                .toCompletableFuture()
                .get();
    }

    /** The HTTP layer over the seed namespaces, a sink that acknowledges at once and no store behind. */
    static GatewayHttpApi testApi() throws Exception {
        NamespaceCatalog catalog = NamespaceCatalog.fromDirectory(Path.of("../infra/namespaces"));
        GatewayConfig config = GatewayConfig.from(Map.of("TALLY_GATEWAY_MAX_BODY_BYTES", "2048"), new String[0]);
        NamespaceResolver namespaces = new NamespaceResolver(catalog);
        WriteRequestParser parser = new WriteRequestParser(namespaces, config);
        PageTokens tokens = new PageTokens("test-secret");
        CassandraSession cassandra = new CassandraSession(config.get(GatewayConfig.CASSANDRA));
        TimeSeriesQueries timeSeries = new TimeSeriesQueries(cassandra, tokens);
        GatewayMetrics metrics = new GatewayMetrics();
        WriteService writes = new WriteService(
                records -> {
                    sent += records.size();
                    return CompletableFuture.completedFuture(new long[records.size()]);
                },
                new IdempotencyCache(100),
                () -> true,
                5_000,
                metrics.forWrites());
        CounterQueries counters = new CounterQueries(timeSeries, cassandra, metrics.forCounterReads());
        return new GatewayHttpApi(
                parser,
                new ReadRequests(namespaces, config),
                writes,
                timeSeries,
                new SearchRequests(namespaces, config),
                new EventSearchQueries(
                        (alias, request) -> {
                            throw new AssertionError("no search reaches Elasticsearch on bad input");
                        },
                        tokens),
                counters,
                new CounterRecount(
                        counters,
                        timeSeries,
                        cassandra,
                        records -> {
                            throw new AssertionError("no repair here");
                        },
                        name -> 1,
                        name -> 1),
                GatewayHttpApi.Health.ALWAYS_UP,
                metrics,
                config.intOf(GatewayConfig.MAX_BODY),
                new NamespaceAdminApi(
                        new NamespaceAdmin(
                                new NamespaceStore("jdbc:postgresql://127.0.0.1:1/none", "u", "p"),
                                catalog,
                                name -> false),
                        new io.tally.common.AdminToken("", true))); // open: the checks before auth are tested
    }

    @AfterAll
    static void stop() {
        vertx.close();
    }

    static HttpResponse<String> post(String path, String body, String contentType) throws Exception {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.actualPort() + path))
                        .header("Content-Type", contentType)
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static String now() {
        return Instant.now().toString();
    }

    /** Every endpoint: path | body ('' = none) | status | code | field ('' = none). */
    @ParameterizedTest(name = "{0} {3}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '`',
            value = {
                "/v1/counter/AddCount | {not json | 400 | MALFORMED_JSON | ",
                "/v1/counter/AddCount | `{\"namespace\":\"nope\",\"counter_name\":\"c\",\"delta\":1}` | 404 | UNKNOWN_NAMESPACE | namespace",
                "/v1/counter/AddCount | `{\"namespace\":\"Bad Name\",\"counter_name\":\"c\",\"delta\":1}` | 400 | INVALID_NAME | namespace",
                "/v1/counter/AddCount | `{\"namespace\":\"playback\",\"counter_name\":\"c\",\"delta\":1}` | 400 | WRONG_NAMESPACE_KIND | namespace",
                "/v1/counter/AddCount | `{\"namespace\":\"video_views\",\"counter_name\":\"c\",\"delta\":1}` | 400 | IDEMPOTENCY_TOKEN_REQUIRED | idempotency_token",
                "/v1/counter/AddCount | `{\"namespace\":\"video_views\",\"delta\":1}` | 400 | MISSING_FIELD | counter_name",
                "/v1/counter/AddCount | `{\"namespace\":\"video_views\",\"counter_name\":\"c\",\"delta\":\"x\",\"idempotency_token\":{\"token\":\"t\",\"generation_time\":\"NOW\"}}` | 400 | INVALID_FIELD | delta",
                "/v1/counter/AddCount | `{\"namespace\":\"video_views\",\"counter_name\":\"c\",\"delta\":1,\"idempotency_token\":{\"token\":\"t\",\"generation_time\":\"2020-01-01T00:00:00Z\"}}` | 400 | OUTSIDE_ACCEPT_WINDOW | idempotency_token.generation_time",
                "/v1/counter/ClearCount | `{\"namespace\":\"video_views\"}` | 400 | MISSING_FIELD | counter_name",
                "/v1/counter/AddCount | `{\"namespace\":\"video_views\",\"counter_name\":\"c\",\"delta\":1,\"idempotencyToken\":{}}` | 400 | UNKNOWN_FIELD | idempotencyToken",
                "/v1/counter/AddCount | `{\"namespace\":\"video_views\",\"counter_name\":\"c\",\"delta\":1,\"idempotency_token\":{\"token\":\"t\",\"generation_time\":\"NOW\",\"ttl\":1}}` | 400 | UNKNOWN_FIELD | idempotency_token.ttl",
                "/v1/timeseries/WriteEventRecords | `{\"namespace\":\"playback\",\"events\":[{\"timeSeriesId\":\"a\",\"eventTime\":\"NOW\",\"eventItems\":[{\"eventItemKey\":\"k\",\"eventItemValue\":\"aQ==\",\"type\":\"x\"}]}]}` | 400 | UNKNOWN_FIELD | events[0].eventItems[0].type",
                "/v1/counter/Recount | `{\"namespace\":\"video_views\",\"counter_name\":\"c\",\"repair\":\"true\"}` | 400 | INVALID_FIELD | repair",
                "/v1/counter/AddAndGetCount | `[]` | 400 | INVALID_FIELD | body",
                "/v1/counter/GetCount | `{\"namespace\":\"nope\",\"counter_name\":\"c\"}` | 404 | UNKNOWN_NAMESPACE | namespace",
                "/v1/counter/GetCount | {not json | 400 | MALFORMED_JSON | ",
                "/v1/counter/GetCount | | 400 | MALFORMED_JSON | ",
                "/v1/counter/GetCount | `{\"namespace\":\"video_views\",\"counter\":\"c\"}` | 400 | UNKNOWN_FIELD | counter",
                "/v1/counter/GetCount | `{\"namespace\":\"playback\",\"counter_name\":\"c\"}` | 400 | WRONG_NAMESPACE_KIND | namespace",
                "/v1/counter/GetCount | `{\"namespace\":\"video_views\"}` | 400 | MISSING_FIELD | counter_name",
                "/v1/counter/GetCount | `{\"namespace\":\"Bad Name\",\"counter_name\":\"c\"}` | 400 | INVALID_NAME | namespace",
                "/v1/counter/GetCount | `{\"namespace\":\"video_views\",\"counter_name\":\"\"}` | 400 | INVALID_FIELD | counter_name",
                "/v1/counter/GetCount | `{\"namespace\":\"video_views\",\"counter_name\":\"a\\u0007b\"}` | 400 | INVALID_FIELD | counter_name",
                "/v1/counter/GetCount | `{\"namespace\":\"video_views\",\"counter_name\":7}` | 400 | INVALID_FIELD | counter_name",
                "/v1/counter/GetCount | `{\"namespace\":\"video_views\",\"counter_name\":\"c\",\"counter_name\":\"d\",\"x\":1}` | 400 | UNKNOWN_FIELD | x",
                "/v1/counter/Recount | `{\"namespace\":\"video_views\"}` | 400 | MISSING_FIELD | counter_name",
                "/v1/timeseries/WriteEventRecords | `{\"namespace\":\"playback\",\"events\":[]}` | 400 | INVALID_FIELD | events",
                "/v1/timeseries/WriteEventRecordsSync | `{\"namespace\":\"playback\",\"events\":[{\"timeSeriesId\":\"a\",\"eventTime\":\"NOW\",\"eventItems\":[{\"eventItemKey\":\"k\",\"eventItemValue\":\"%%%\"}]}]}` | 400 | INVALID_BASE64 | events[0].eventItems[0].eventItemValue",
                "/v1/timeseries/WriteEventRecordsSync | `{\"namespace\":\"playback\",\"events\":[{\"timeSeriesId\":\"a\",\"eventTime\":\"yesterday\",\"eventItems\":[]}]}` | 400 | INVALID_FIELD | events[0].eventTime",
                "/v1/timeseries/WriteEventRecordsSync | `{\"namespace\":\"playback\",\"events\":[{\"timeSeriesId\":\"a\",\"eventTime\":\"NOW\",\"eventItems\":[{\"eventItemKey\":\"duration\",\"eventItemValue\":\"MzAwMDAwMDAwMA==\"}]}]}` | 400 | INVALID_FIELD_VALUE | events[0].eventItems[0].eventItemValue",
                "/v1/timeseries/ReadEventRecords | `{\"namespace\":\"playback\"}` | 400 | MISSING_FIELD | timeSeriesId",
                "/v1/timeseries/SearchEventRecords | `{\"namespace\":\"video_views\"}` | 400 | WRONG_NAMESPACE_KIND | namespace",
                "/v1/timeseries/AggregateEventRecords | `{\"namespace\":\"nope\"}` | 404 | UNKNOWN_NAMESPACE | namespace",
            })
    void badInputIsRefusedWithItsCodeAndFieldAndWritesNothing(
            String path, String body, int status, String code, String field) throws Exception {
        int before = sent;
        HttpResponse<String> r = post(path, body == null ? "" : body.replace("NOW", now()), "application/json");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        JsonNode error = JSON.readTree(r.body()).path("error");
        assertThat(error.path("code").asText()).isEqualTo(code);
        assertThat(error.path("message").asText()).isNotBlank();
        if (field == null) {
            assertThat(error.has("field")).isFalse();
        } else {
            assertThat(error.path("field").asText()).isEqualTo(field);
        }
        assertThat(sent).isEqualTo(before);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "/v1/counter/AddCount",
        "/v1/counter/GetCount",
        "/v1/timeseries/WriteEventRecordsSync",
        "/v1/timeseries/ReadEventRecords"
    })
    void onlyJsonIsTaken(String path) throws Exception {
        HttpResponse<String> r = post(path, "namespace=x", "application/x-www-form-urlencoded");
        assertThat(r.statusCode()).isEqualTo(415);
        assertThat(JSON.readTree(r.body()).path("error").path("code").asText()).isEqualTo("UNSUPPORTED_MEDIA_TYPE");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"/v1/counter/AddCount", "/v1/counter/GetCount", "/v1/timeseries/WriteEventRecordsSync"})
    void aBodyOverTheLimitIs413(String path) throws Exception {
        HttpResponse<String> r = post(path, "{\"namespace\":\"" + "x".repeat(4096) + "\"}", "application/json");
        assertThat(r.statusCode()).isEqualTo(413);
        assertThat(JSON.readTree(r.body()).path("error").path("code").asText()).isEqualTo("BODY_TOO_LARGE");
    }

    @org.junit.jupiter.api.Test
    void aReusedTokenWithAnotherPayloadIs409AndTheRetryIsTaken() throws Exception {
        String token = "{\"token\":\"tok-" + System.nanoTime() + "\",\"generation_time\":\"" + now() + "\"}";
        String add =
                "{\"namespace\":\"page_hits\",\"counter_name\":\"c\",\"idempotency_token\":" + token + ",\"delta\":";
        assertThat(post("/v1/counter/AddCount", add + "1}", "application/json").statusCode())
                .isEqualTo(202);
        assertThat(post("/v1/counter/AddCount", add + "1}", "application/json").statusCode())
                .isEqualTo(202);
        HttpResponse<String> reuse = post("/v1/counter/AddCount", add + "2}", "application/json");
        assertThat(reuse.statusCode()).isEqualTo(409);
        ObjectNode error = (ObjectNode) JSON.readTree(reuse.body()).path("error");
        assertThat(error.path("code").asText()).isEqualTo("IDEMPOTENCY_KEY_REUSE");
        assertThat(error.path("field").asText()).isEqualTo("idempotency_token.token");
    }

    @org.junit.jupiter.api.Test
    void aGetOnAWriteEndpointIs405AndAnUnknownPathIs404() throws Exception {
        HttpResponse<String> get = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.actualPort() + "/v1/counter/AddCount"))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(get.statusCode()).isEqualTo(405);
        assertThat(post("/v1/nothing", "{}", "application/json").statusCode()).isEqualTo(404);
    }

    /** The data plane is answered before the router (DirectEndpoints); what it cannot take, the router answers alike. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"GetCount", "AddCount", "WriteEventRecordsSync"})
    void theDataPlaneAnswersAlikeWithOrWithoutTheRouter(String endpoint) throws Exception {
        String path = (endpoint.endsWith("Count") ? "/v1/counter/" : "/v1/timeseries/") + endpoint;
        URI uri = URI.create("http://127.0.0.1:" + server.actualPort() + path);
        String body = "{\"namespace\":\"video_views\",\"counter\":\"c\"}";
        HttpResponse<String> direct = post(path, body, "application/json");
        // no Content-Length: a chunked body, which the router's body handler reads
        HttpResponse<String> chunked = HTTP.send(
                HttpRequest.newBuilder(uri)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofInputStream(
                                () -> new java.io.ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8))))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(direct.statusCode()).as(direct.body()).isEqualTo(400);
        assertThat(chunked.statusCode()).isEqualTo(direct.statusCode());
        assertThat(chunked.body()).isEqualTo(direct.body());

        HttpResponse<String> get =
                HTTP.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(get.statusCode()).isEqualTo(405);
        assertThat(get.headers().firstValue("Allow")).contains("POST");
        assertThat(JSON.readTree(get.body()).path("error").path("code").asText())
                .isEqualTo("METHOD_NOT_ALLOWED");

        HttpResponse<String> metrics = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.actualPort() + "/metrics"))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.body())
                .containsPattern("tally_gateway_requests_total\\{code=\"400\",endpoint=\"" + endpoint + "\"} [1-9]")
                .contains("tally_gateway_request_seconds_count{endpoint=\"" + endpoint + "\"}");
    }

    /** A write's answer written as bytes is what Jackson wrote for its tree. */
    @org.junit.jupiter.api.Test
    void theAcceptedAnswerIsJacksonsOwn() throws Exception {
        io.tally.gateway.service.WriteBatch batch = new io.tally.gateway.service.WriteBatch(
                null, java.util.Collections.nCopies(3, null), java.util.List.of("a", "b", "c"), java.util.List.of());
        assertThat(GatewayHttpApi.accepted(batch).toString(StandardCharsets.UTF_8))
                .isEqualTo(JSON.writeValueAsString(JSON.createObjectNode().put("accepted", 3)));
        io.tally.gateway.service.WriteBatch generated = new io.tally.gateway.service.WriteBatch(
                null, java.util.Collections.nCopies(2, null), java.util.List.of("a", "b"), java.util.List.of(1));
        assertThat(JSON.readTree(GatewayHttpApi.accepted(generated).getBytes()))
                .isEqualTo(JSON.readTree("{\"accepted\":2,\"eventIds\":[\"a\",\"b\"],\"generatedEventIds\":[1]}"));
    }

    @ParameterizedTest(name = "Content-Length {0}: {1}")
    @CsvSource({"10,true", "2048,true", "2049,false", "'',false", "-1,false", "1e3,false", "99999999999,false"})
    void getCountTakesOnlyABoundedContentLength(String contentLength, boolean taken) {
        assertThat(DirectEndpoints.withinLimit(contentLength, 2048)).isEqualTo(taken);
    }
}
