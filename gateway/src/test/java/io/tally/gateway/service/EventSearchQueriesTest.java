package io.tally.gateway.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.service.EventSearchQueries.AnyOf;
import io.tally.gateway.service.EventSearchQueries.Bound;
import io.tally.gateway.service.EventSearchQueries.Equals;
import io.tally.gateway.service.EventSearchQueries.Range;
import io.tally.gateway.service.EventSearchQueries.SearchQuery;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfigParser;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The search service over a backend that records the DSL it is sent and answers canned hits:
 * the criteria's Elasticsearch query, the alias, and paging by search_after with a token bound
 * to the query.
 */
class EventSearchQueriesTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final NamespaceConfig PLAYBACK = NamespaceConfigParser.parse(
            "playback",
            "{\"kind\":\"timeseries\",\"index\":{\"enabled\":true,"
                    + "\"field_mapping\":{\"deviceType\":\"KEYWORD\",\"duration\":\"INTEGER\"}}}");
    static final NamespaceConfig UNINDEXED = NamespaceConfigParser.parse("plain", "{\"kind\":\"timeseries\"}");

    final List<String> aliases = new ArrayList<>();
    final List<ObjectNode> requests = new ArrayList<>();
    final PageTokens tokens = new PageTokens("test-secret");
    JsonNode answer = JSON.createObjectNode();
    final EventSearchQueries search = new EventSearchQueries(
            (alias, request) -> {
                aliases.add(alias);
                requests.add(request);
                return answer;
            },
            tokens);

    static JsonNode hits(int n, long newestMicros) {
        ObjectNode root = JSON.createObjectNode();
        var list = root.putObject("hits").putArray("hits");
        for (int i = 0; i < n; i++) {
            list.addObject()
                    .putObject("_source")
                    .put("time_series_id", "p1")
                    .put("event_time_us", newestMicros - i)
                    .put("event_id", "e" + i)
                    .put("deviceType", "tv")
                    .put("duration", 30 + i);
        }
        return root;
    }

    @Test
    void criteriaBecomeFiltersOnTheNamespaceAlias() throws Exception {
        search.search(new SearchQuery(
                PLAYBACK,
                1_000,
                2_000,
                new AnyOf(List.of(
                        new Equals("deviceType", "tv"),
                        new Range("duration", new Bound(10, true), new Bound(60, false)))),
                10,
                1000,
                null));
        assertThat(aliases).containsExactly("tally-playback");
        JsonNode req = requests.get(0);
        assertThat(req.path("size").asInt()).isEqualTo(11); // one more: is there a next page?
        JsonNode filter = req.path("query").path("bool").path("filter");
        assertThat(filter.get(0).path("range").path("event_time_us").path("gte").asLong())
                .isEqualTo(1_000);
        assertThat(filter.get(0).path("range").path("event_time_us").path("lt").asLong())
                .isEqualTo(2_000);
        JsonNode any = filter.get(1).path("bool");
        assertThat(any.path("minimum_should_match").asInt()).isEqualTo(1);
        assertThat(any.path("should").get(0)).isEqualTo(JSON.readTree("{\"term\":{\"deviceType\":\"tv\"}}"));
        assertThat(any.path("should").get(1))
                .isEqualTo(JSON.readTree("{\"range\":{\"duration\":{\"gte\":10,\"lt\":60}}}"));
    }

    @Test
    void aFullPageCarriesATokenThatResumesAfterItsLastEvent() {
        answer = hits(3, 9_000);
        SearchQuery first = new SearchQuery(PLAYBACK, 0, 10_000, null, 2, 1000, null);
        EventSearchQueries.SearchPage page = search.search(first);
        assertThat(page.events()).extracting(EventSearchQueries.Hit::eventId).containsExactly("e0", "e1");
        assertThat(page.events().get(0).items())
                .containsExactlyInAnyOrder(Map.entry("deviceType", "tv"), Map.entry("duration", "30"));
        assertThat(page.nextPageToken()).isNotNull();

        answer = hits(1, 8_998);
        EventSearchQueries.SearchPage second =
                search.search(new SearchQuery(PLAYBACK, 0, 10_000, null, 2, 1000, page.nextPageToken()));
        assertThat(requests.get(1).path("search_after").toString()).isEqualTo("[8999,\"e1\"]");
        assertThat(second.nextPageToken()).isNull();
    }

    @Test
    void theTotalLimitEndsThePaging() {
        answer = hits(3, 9_000);
        EventSearchQueries.SearchPage page = search.search(new SearchQuery(PLAYBACK, 0, 10_000, null, 2, 2, null));
        assertThat(page.events()).hasSize(2);
        assertThat(page.nextPageToken()).isNull();
    }

    @Test
    void aTokenOfAnotherQueryIsRefused() {
        answer = hits(3, 9_000);
        String token = search.search(new SearchQuery(PLAYBACK, 0, 10_000, null, 2, 1000, null))
                .nextPageToken();
        SearchQuery other = new SearchQuery(PLAYBACK, 0, 10_000, new Equals("deviceType", "tv"), 2, 1000, token);
        assertThatThrownBy(() -> search.search(other))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.field()).isEqualTo("pageToken"));
    }

    @Test
    void anUnindexedNamespaceIsRefusedBeforeElasticsearchIsAsked() {
        assertThatThrownBy(() -> search.search(new SearchQuery(UNINDEXED, 0, 10, null, 2, 1000, null)))
                .isInstanceOfSatisfying(
                        ServiceException.class, e -> assertThat(e.code()).isEqualTo("INDEX_DISABLED"));
        assertThat(requests).isEmpty();
    }

    @Test
    void distinctValuesComeBackWithTheirCounts() throws Exception {
        answer = JSON.readTree("{\"aggregations\":{\"distinct\":{\"buckets\":["
                + "{\"key\":\"tv\",\"doc_count\":7},{\"key\":1,\"key_as_string\":\"true\",\"doc_count\":2}]}}}");
        EventSearchQueries.Distinct d =
                search.distinct(new EventSearchQueries.DistinctQuery(PLAYBACK, 0, 10, null, "deviceType", 5));
        assertThat(d.values())
                .containsExactly(
                        new EventSearchQueries.ValueCount("tv", 7), new EventSearchQueries.ValueCount("true", 2));
        assertThat(requests.get(0)
                        .path("aggs")
                        .path("distinct")
                        .path("terms")
                        .path("size")
                        .asInt())
                .isEqualTo(5);
        assertThat(requests.get(0).path("size").asInt()).isZero();
    }
}
