package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventRecordsBodyTest {
    static final String ITEM = "{'eventItemKey':'k','eventItemValue':'dg=='}";
    static final String EVENT =
            "{'timeSeriesId':'t','eventTime':'2026-11-22T10:00:00Z','eventId':'e','eventItems':[" + ITEM + "]}";

    static EventRecordsBody.Body read(String json) {
        return EventRecordsBody.read(Buffer.buffer(json.replace('\'', '"')), 3, 2);
    }

    static String body(String... events) {
        return "{'namespace':'playback','events':[" + String.join(",", events) + "]}";
    }

    @Test
    void theCommonShapeIsReadIntoItsStrings() {
        EventRecordsBody.Body b = read(body(EVENT, EVENT.replace("'e'", "'f'")));
        assertThat(b.namespace()).isEqualTo("playback");
        assertThat(b.events())
                .containsExactly(
                        new EventRecordsBody.Event(
                                "t", "2026-11-22T10:00:00Z", "e", List.of(new EventRecordsBody.Item("k", "dg=="))),
                        new EventRecordsBody.Event(
                                "t", "2026-11-22T10:00:00Z", "f", List.of(new EventRecordsBody.Item("k", "dg=="))));
    }

    @Test
    void anEventIdMayBeLeftOutAndItemsMayBeNone() {
        EventRecordsBody.Body b = read(body("{'eventItems':[],'eventTime':'x','timeSeriesId':'t'}"));
        assertThat(b.events()).containsExactly(new EventRecordsBody.Event("t", "x", null, List.of()));
    }

    @Test
    void upToTheLimitsIsRead() {
        assertThat(read(body(EVENT, EVENT, EVENT))).isNotNull();
        assertThat(read(body(EVENT.replace(ITEM, ITEM + "," + ITEM)))).isNotNull();
    }

    @Test
    void everyOtherBodyIsLeftToTheTree() {
        String[] others = {
            "",
            "[]",
            "not json",
            "{'namespace':'playback','events':[" + EVENT, // cut short
            body(EVENT) + " {}", // content after the object
            body(), // no events
            body(EVENT, EVENT, EVENT, EVENT), // more than the limit
            body(EVENT.replace(ITEM, ITEM + "," + ITEM + "," + ITEM)), // more items than the limit
            "{'namespace':'playback'}",
            "{'events':[" + EVENT + "]}",
            "{'namespace':7,'events':[" + EVENT + "]}",
            "{'namespace':'playback','namespace':'playback','events':[" + EVENT + "]}",
            "{'namespace':'playback','events':[" + EVENT + "],'extra':1}",
            "{'namespace':'playback','events':{}}",
            body("7"),
            body(EVENT.replace("'eventId':'e'", "'eventId':null")),
            body(EVENT.replace("'eventId':'e'", "'eventId':'e','eventId':'f'")),
            body(EVENT.replace("'eventId':'e'", "'other':'e'")),
            body(EVENT.replace("'t'", "7")),
            body(EVENT.replace("'timeSeriesId':'t',", "")),
            body(EVENT.replace("'eventTime':'2026-11-22T10:00:00Z',", "")),
            body(EVENT.replace(",'eventItems':[" + ITEM + "]", "")),
            body(EVENT.replace("[" + ITEM + "]", "{}")),
            body(EVENT.replace(ITEM, "'k'")),
            body(EVENT.replace(ITEM, "{'eventItemKey':'k'}")),
            body(EVENT.replace(ITEM, "{'eventItemKey':'k','eventItemValue':1}")),
            body(EVENT.replace(ITEM, "{'eventItemKey':'k','eventItemValue':'dg==','eventItemValue':'dg=='}")),
            body(EVENT.replace(ITEM, "{'eventItemKey':'k','eventItemValue':'dg==','x':'y'}")),
            body(EVENT.replace(ITEM, "{'eventItemKey':'k','eventItemValue':{'nested':'v'}}")),
        };
        for (String o : others) {
            assertThat(read(o)).as(o).isNull();
        }
    }

    @Test
    void aBodyOffTheHeapIsLeftToTheTree() {
        byte[] json = body(EVENT).replace('\'', '"').getBytes(StandardCharsets.UTF_8);
        Buffer direct = Buffer.buffer(Unpooled.directBuffer(json.length).writeBytes(json));
        assertThat(EventRecordsBody.read(direct, 3, 2)).isNull();
    }
}
