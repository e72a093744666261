package io.tally.jobs.elasticsearch;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The body of one `_bulk` request (newline-delimited JSON): an index action and its document per
 * event, each document written once, straight from its fields. The high-level client's bulk
 * parsed every document it had just serialized and wrote it again (RequestConverters.bulk), a
 * fifth of the TaskManager's CPU an indexed event (async-profiler, docs/performance-log.md).
 * Remembers where each action starts, so the actions Elasticsearch refused for a while can be
 * sent again alone.
 */
public final class BulkBody {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte[] NEWLINE = {'\n'};

    private final Bytes out = new Bytes(4096);
    private int[] starts = new int[64];
    private int actions;

    /** Appends an index action (create or replace the document of this id). */
    public void index(String index, String id, Map<String, Object> source) {
        start();
        try (JsonGenerator g = JSON.getFactory().createGenerator(out, JsonEncoding.UTF8)) {
            g.setRootValueSeparator(null); // the action and its document are two lines, no space between
            g.writeStartObject();
            g.writeObjectFieldStart("index");
            g.writeStringField("_index", index);
            g.writeStringField("_id", id);
            g.writeEndObject();
            g.writeEndObject();
            g.writeRaw('\n');
            JSON.writeValue(g, source);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a byte array does not fail; a source value Jackson cannot write does
        }
        out.write(NEWLINE, 0, 1);
    }

    private void start() {
        if (actions == starts.length) {
            starts = Arrays.copyOf(starts, actions * 2);
        }
        starts[actions++] = out.size();
    }

    public int actions() {
        return actions;
    }

    public int bytes() {
        return out.size();
    }

    public boolean isEmpty() {
        return actions == 0;
    }

    /** The request's bytes (valid up to {@link #bytes()}; not a copy). */
    public byte[] array() {
        return out.buffer();
    }

    /** A body of the given actions of this one (by position), in that order. */
    public BulkBody only(List<Integer> positions) {
        BulkBody b = new BulkBody();
        for (int p : positions) {
            int from = starts[p];
            int to = p + 1 < actions ? starts[p + 1] : out.size();
            b.start();
            b.out.write(out.buffer(), from, to - from);
        }
        return b;
    }

    /** A ByteArrayOutputStream whose buffer can be sent without a copy. */
    private static final class Bytes extends ByteArrayOutputStream {
        Bytes(int size) {
            super(size);
        }

        byte[] buffer() {
            return buf;
        }
    }
}
