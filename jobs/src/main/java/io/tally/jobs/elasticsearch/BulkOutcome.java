package io.tally.jobs.elasticsearch;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What Elasticsearch answered a `_bulk` request, asked for with {@link #FILTER_PATH} so an answer
 * without errors is `{"errors":false,...}` and is read no further than that: the high-level
 * client parsed every item of every answer into objects. With errors, each item's status says
 * which actions may go again (Elasticsearch was busy: 429, or the shard not yet there: 503) and
 * which were refused for good (a document its mapping refuses, say).
 */
public record BulkOutcome(List<Integer> retry, List<String> refused) {
    /** Only whether anything failed and, per item, its status and error (not its index, id, version...). */
    public static final String FILTER_PATH = "errors,items.*.status,items.*.error.type,items.*.error.reason";

    private static final JsonFactory JSON = new JsonFactory();
    private static final BulkOutcome ALL_DONE = new BulkOutcome(List.of(), List.of());

    public boolean done() {
        return retry.isEmpty() && refused.isEmpty();
    }

    /** An item's status that is worth another try later. */
    static boolean retryable(int status) {
        return status == 429 || status == 503;
    }

    /** @throws IOException when the answer is not a bulk answer */
    public static BulkOutcome parse(byte[] body, int length) throws IOException {
        try (JsonParser p = JSON.createParser(body, 0, length)) {
            expect(p.nextToken(), JsonToken.START_OBJECT, p);
            List<Integer> retry = new ArrayList<>();
            List<String> refused = new ArrayList<>();
            boolean errors = true;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (field.equals("errors")) {
                    errors = value == JsonToken.VALUE_TRUE;
                    if (!errors) {
                        return ALL_DONE; // Elasticsearch writes "errors" before "items"
                    }
                } else if (field.equals("items") && value == JsonToken.START_ARRAY) {
                    items(p, retry, refused);
                } else {
                    p.skipChildren();
                }
            }
            if (!errors) {
                return ALL_DONE;
            }
            return new BulkOutcome(retry, refused);
        }
    }

    /** Each item: {"index": {"status": 201}} or {"index": {"status": 429, "error": {"type": ..., "reason": ...}}}. */
    private static void items(JsonParser p, List<Integer> retry, List<String> refused) throws IOException {
        int position = 0;
        while (p.nextToken() == JsonToken.START_OBJECT) {
            int status = 0;
            String type = null;
            String reason = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) { // the action: "index"
                expect(p.nextToken(), JsonToken.START_OBJECT, p);
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String field = p.currentName();
                    JsonToken value = p.nextToken();
                    if (field.equals("status") && value == JsonToken.VALUE_NUMBER_INT) {
                        status = p.getIntValue();
                    } else if (field.equals("error") && value == JsonToken.START_OBJECT) {
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String f = p.currentName();
                            JsonToken v = p.nextToken();
                            if (f.equals("type") && v == JsonToken.VALUE_STRING) {
                                type = p.getText();
                            } else if (f.equals("reason") && v == JsonToken.VALUE_STRING) {
                                reason = p.getText();
                            } else {
                                p.skipChildren();
                            }
                        }
                    } else {
                        p.skipChildren();
                    }
                }
            }
            if (status / 100 != 2) {
                if (retryable(status)) {
                    retry.add(position);
                } else {
                    refused.add("action " + position + ": HTTP " + status + " " + type + ": " + reason);
                }
            }
            position++;
        }
    }

    private static void expect(JsonToken got, JsonToken wanted, JsonParser p) throws IOException {
        if (got != wanted) {
            throw new IOException(
                    "not a bulk answer: " + got + " where " + wanted + " was expected at " + p.currentLocation());
        }
    }
}
