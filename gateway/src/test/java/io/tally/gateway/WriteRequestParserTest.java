package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.WriteBatch;
import io.tally.model.Micros;
import io.tally.namespace.NamespaceCatalog;
import io.vertx.core.buffer.Buffer;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tally.v1.CounterEvent;
import tally.v1.CounterOp;
import tally.v1.EventItem;
import tally.v1.TimeSeriesEvent;

class WriteRequestParserTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Instant NOW = Instant.parse("2026-11-22T10:00:00Z");
    static final long NOW_MICROS = NOW.toEpochMilli() * 1000;
    static WriteRequestParser parser;

    @BeforeAll
    static void load() throws Exception {
        NamespaceCatalog catalog = NamespaceCatalog.fromDirectory(Path.of("../infra/namespaces"));
        parser = new WriteRequestParser(
                new io.tally.gateway.service.NamespaceResolver(catalog),
                GatewayConfig.from(
                        Map.of(
                                "TALLY_GATEWAY_MAX_EVENTS",
                                "3",
                                "TALLY_GATEWAY_MAX_ITEMS",
                                "2",
                                "TALLY_GATEWAY_MAX_VALUE_BYTES",
                                "8",
                                "TALLY_GATEWAY_MAX_EVENT_BYTES",
                                "300"),
                        new String[0]));
    }

    static JsonNode json(String s) throws Exception {
        return JSON.readTree(s.replace('\'', '"'));
    }

    static ServiceException error(Runnable r) {
        try {
            r.run();
        } catch (ServiceException e) {
            return e;
        }
        throw new AssertionError("no ServiceException");
    }

    @Test
    void theArticlesTimeSeriesExampleBecomesAvro() throws Exception {
        WriteBatch b = parser.events(
                json("{'namespace':'playback','events':[{'timeSeriesId':'profile100',"
                        + "'eventTime':'2026-11-22T09:59:59.988Z','eventId':'550e8400-e29b-41d4-a716-446655440000',"
                        + "'eventItems':[{'eventItemKey':'deviceType','eventItemValue':'aW9z'}]}]}"),
                NOW_MICROS);
        assertThat(b.records()).hasSize(1);
        WriteBatch.Outgoing o = b.records().get(0);
        assertThat(o.topic()).isEqualTo("tally.timeseries.events");
        assertThat(o.key()).isEqualTo("playback/profile100");
        TimeSeriesEvent r = (TimeSeriesEvent) o.value();
        assertThat(Micros.of(r.getEventTime())).isEqualTo(NOW_MICROS - 12_000);
        assertThat(r.getEventId()).isEqualTo("550e8400-e29b-41d4-a716-446655440000");
        EventItem item = r.getItems().get(0);
        assertThat(item.getKey()).isEqualTo("deviceType");
        assertThat(item.getValue().array()).isEqualTo("ios".getBytes());
        assertThat(b.generatedIds()).isEmpty();
    }

    @Test
    void missingEventIdsAreMadeAndReported() throws Exception {
        WriteBatch b = parser.events(
                json("{'namespace':'playback','events':[{'timeSeriesId':'a',"
                        + "'eventTime':'2026-11-22T10:00:00Z','eventId':'x','eventItems':[]},{'timeSeriesId':'a',"
                        + "'eventTime':'2026-11-22T10:00:00Z','eventItems':[]}]}"),
                NOW_MICROS);
        assertThat(b.generatedIds()).containsExactly(1);
        assertThat(b.eventIds().get(0)).isEqualTo("x");
        assertThat(b.eventIds().get(1)).hasSize(36);
    }

    @Test
    void counterEventsTakeTimeAndIdFromTheToken() throws Exception {
        WriteBatch b = parser.counter(
                json("{'namespace':'video_views','counter_name':'c','delta':-4,"
                        + "'idempotency_token':{'token':'tok','generation_time':'2026-11-22T09:59:58Z'}}"),
                false,
                NOW_MICROS);
        CounterEvent r = (CounterEvent) b.records().get(0).value();
        assertThat(r.getOp()).isEqualTo(CounterOp.ADD);
        assertThat(r.getDelta()).isEqualTo(-4L);
        assertThat(r.getEventId()).isEqualTo("tok");
        assertThat(Micros.of(r.getEventTime())).isEqualTo(NOW_MICROS - 2_000_000);
        assertThat(b.records().get(0).key()).isEqualTo("video_views/c");
        WriteBatch clear = parser.counter(
                json("{'namespace':'video_views','counter_name':'c',"
                        + "'idempotency_token':{'token':'t2','generation_time':'2026-11-22T10:00:00Z'}}"),
                true,
                NOW_MICROS);
        assertThat(((CounterEvent) clear.records().get(0).value()).getOp()).isEqualTo(CounterOp.CLEAR);
    }

    @Test
    void bestEffortCountersNeedNoToken() throws Exception {
        WriteBatch b =
                parser.counter(json("{'namespace':'page_hits','counter_name':'c','delta':1}"), false, NOW_MICROS);
        assertThat(b.generatedIds()).containsExactly(0);
        assertThat(error(() -> parseCounter("{'namespace':'ad_clicks','counter_name':'c','delta':1}"))
                        .code())
                .isEqualTo("IDEMPOTENCY_TOKEN_REQUIRED");
    }

    static void parseCounter(String s) {
        try {
            parser.counter(json(s), false, NOW_MICROS);
        } catch (ServiceException e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static boolean parseCounterOk(String s) {
        parseCounter(s);
        return true;
    }

    static void parseEvents(String s) {
        try {
            parser.events(json(s), NOW_MICROS);
        } catch (ServiceException e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    static final String EV = "{'timeSeriesId':'a','eventTime':'2026-11-22T10:00:00Z','eventItems':[]}";

    /** Refused WriteEventRecords bodies: the body, its status, code and field. */
    static Object[][] refusedEvents() {
        String ev = EV;
        return new Object[][] {
            {"{'namespace':'nope','events':[" + ev + "]}", 404, "UNKNOWN_NAMESPACE", "namespace"},
            {"{'namespace':'Nope!','events':[" + ev + "]}", 400, "INVALID_NAME", "namespace"},
            {"{'namespace':'video_views','events':[" + ev + "]}", 400, "WRONG_NAMESPACE_KIND", "namespace"},
            {"{'namespace':'playback'}", 400, "MISSING_FIELD", "events"},
            {"{'namespace':'playback','events':{}}", 400, "INVALID_FIELD", "events"},
            {
                "{'namespace':'playback','events':[" + ev + "," + ev + "," + ev + "," + ev + "]}",
                413,
                "TOO_MANY_EVENTS",
                "events"
            },
            {
                "{'namespace':'playback','events':[{'timeSeriesId':7,'eventTime':'2026-11-22T10:00:00Z','eventItems':[]}]}",
                400,
                "INVALID_FIELD",
                "events[0].timeSeriesId"
            },
            {
                "{'namespace':'playback','events':[{'timeSeriesId':'a','eventTime':'yesterday','eventItems':[]}]}",
                400,
                "INVALID_FIELD",
                "events[0].eventTime"
            },
            {
                "{'namespace':'playback','events':[{'timeSeriesId':'a','eventTime':'2026-11-22T09:59:50Z','eventItems':[]}]}",
                400,
                "OUTSIDE_ACCEPT_WINDOW",
                "events[0].eventTime"
            },
            {
                "{'namespace':'playback','events':[{'timeSeriesId':'a','eventTime':'2026-11-22T10:00:30Z','eventItems':[]}]}",
                400,
                "OUTSIDE_ACCEPT_WINDOW",
                "events[0].eventTime"
            },
            {
                "{'namespace':'playback','events':[{'timeSeriesId':'a','eventTime':'2026-11-22T10:00:00Z','eventItems':["
                        + "{'eventItemKey':'k','eventItemValue':'!!'}]}]}",
                400,
                "INVALID_BASE64",
                "events[0].eventItems[0].eventItemValue"
            },
            {
                "{'namespace':'playback','events':[{'timeSeriesId':'a','eventTime':'2026-11-22T10:00:00Z','eventItems':["
                        + "{'eventItemKey':'k','eventItemValue':'AAAAAAAAAAAAAAAA'}]}]}",
                413,
                "VALUE_TOO_LARGE",
                "events[0].eventItems[0].eventItemValue"
            },
            {
                "{'namespace':'playback','events':[{'timeSeriesId':'a','eventTime':'2026-11-22T10:00:00Z','eventItems':["
                        + "{'eventItemKey':'a','eventItemValue':''},{'eventItemKey':'b','eventItemValue':''},{'eventItemKey':'c','eventItemValue':''}]}]}",
                413,
                "TOO_MANY_ITEMS",
                "events[0].eventItems"
            },
            {
                "{'namespace':'playback','events':[{'timeSeriesId':'" + "t".repeat(250)
                        + "','eventTime':'2026-11-22T10:00:00Z','eventItems':[]}]}",
                413,
                "EVENT_TOO_LARGE",
                "events[0]"
            },
            { // duration is indexed as INTEGER: 1.5 would stop Elasticsearch from taking the document
                "{'namespace':'playback','events':[{'timeSeriesId':'a','eventTime':'2026-11-22T10:00:00Z','eventItems':["
                        + "{'eventItemKey':'deviceType','eventItemValue':'dHY='},{'eventItemKey':'duration','eventItemValue':'MS41'}]}]}",
                400,
                "INVALID_FIELD_VALUE",
                "events[0].eventItems[1].eventItemValue"
            },
        };
    }

    @Test
    void everyRejectionHasStatusCodeAndField() {
        for (Object[] c : refusedEvents()) {
            ServiceException e = error(() -> parseEvents((String) c[0]));
            assertThat(new Object[] {HttpErrors.status(e.kind()), e.code(), e.field()})
                    .as((String) c[0])
                    .containsExactly(c[1], c[2], c[3]);
        }
        ServiceException delta = error(() -> parseCounter("{'namespace':'video_views','counter_name':'c','delta':'two',"
                + "'idempotency_token':{'token':'t','generation_time':'2026-11-22T10:00:00Z'}}"));
        assertThat(delta.field()).isEqualTo("delta");
        ServiceException control =
                error(() -> parseCounter("{'namespace':'page_hits','counter_name':'a\\u0000b','delta':1}"));
        assertThat(control.field()).isEqualTo("counter_name");
        ServiceException lone =
                error(() -> parseCounter("{'namespace':'page_hits','counter_name':'a\\ud800b','delta':1}"));
        assertThat(lone.getMessage()).contains("surrogate");
        ServiceException loneAtEnd =
                error(() -> parseCounter("{'namespace':'page_hits','counter_name':'ab\\udc00','delta':1}"));
        assertThat(loneAtEnd.field()).isEqualTo("counter_name");
        assertThat(parseCounterOk("{'namespace':'page_hits','counter_name':'emoji\\ud83d\\ude00','delta':1}"))
                .isTrue();
        assertThat(control.field()).isEqualTo("counter_name");
    }

    static Buffer body(String s) {
        return Buffer.buffer(s.replace('\'', '"'));
    }

    @Test
    void theCommonBodyWithoutATreeMakesTheTreesBatch() throws Exception {
        String[] bodies = {
            "{'namespace':'playback','events':[{'timeSeriesId':'profile100','eventTime':'2026-11-22T09:59:59.988Z',"
                    + "'eventId':'e1','eventItems':[{'eventItemKey':'deviceType','eventItemValue':'aW9z'}]}]}",
            // fields in any order, whitespace, escapes, characters outside ASCII, an offset, two items
            " { \n 'events' : [ { 'eventItems':[{'eventItemValue':'dHY=','eventItemKey':'deviceType'},"
                    + "{'eventItemKey':'duration','eventItemValue':'MTI='}], 'eventId':'id\\u00e9\\'q',"
                    + "'eventTime':'2026-11-22T10:59:59+01:00','timeSeriesId':'caf\u00e9 \ud83d\ude00'} ],"
                    + "'namespace':'playback' } ",
            "{'namespace':'playback','events':[" + EV.replace("'eventItems'", "'eventId':'x','eventItems'") + ","
                    + EV.replace("'a'", "'b'").replace("'eventItems'", "'eventId':'y','eventItems'") + "]}",
        };
        for (String b : bodies) {
            WriteBatch tree = parser.events(json(b), NOW_MICROS);
            WriteBatch common = parser.commonEvents(body(b), NOW_MICROS);
            assertThat(common).as(b).isNotNull();
            assertThat(common.records()).as(b).isEqualTo(tree.records());
            assertThat(common.eventIds()).isEqualTo(tree.eventIds());
            assertThat(common.generatedIds()).isEqualTo(tree.generatedIds()).isEmpty();
            assertThat(common.namespace()).isSameAs(tree.namespace());
        }
        // ids made here differ between two reads; which events got one does not
        String noIds = "{'namespace':'playback','events':[" + EV + ","
                + EV.replace("'eventItems'", "'eventId':'z','eventItems'") + "]}";
        WriteBatch made = parser.commonEvents(body(noIds), NOW_MICROS);
        assertThat(made.generatedIds())
                .isEqualTo(parser.events(json(noIds), NOW_MICROS).generatedIds())
                .containsExactly(0);
        assertThat(made.eventIds().get(0)).hasSize(36);
        assertThat(made.eventIds().get(1)).isEqualTo("z");
    }

    @Test
    void everyRefusedBodyIsLeftToTheTreeToName() {
        for (Object[] c : refusedEvents()) {
            assertThat(parser.commonEvents(body((String) c[0]), NOW_MICROS))
                    .as((String) c[0])
                    .isNull();
        }
        // refusals of checks the common shape passes to the tree: an id too long, a control character
        String longId = "{'namespace':'playback','events':[" + EV.replace("'a'", "'" + "a".repeat(300) + "'") + "]}";
        String control = "{'namespace':'playback','events':[" + EV.replace("'a'", "'a\\u0001'") + "]}";
        for (String b : new String[] {longId, control}) {
            assertThat(parser.commonEvents(body(b), NOW_MICROS)).as(b).isNull();
            assertThat(error(() -> parseEvents(b)).field()).isEqualTo("events[0].timeSeriesId");
        }
    }

    @Test
    void digestsTellPayloadsApart() {
        assertThat(io.tally.gateway.service.Fnv64.of("a=1")).isEqualTo(io.tally.gateway.service.Fnv64.of("a=1"));
        assertThat(io.tally.gateway.service.Fnv64.of("a=1")).isNotEqualTo(io.tally.gateway.service.Fnv64.of("a=2"));
    }
}
