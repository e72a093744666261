package io.tally.gateway;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * A body that is one flat JSON object whose fields are all strings of known names, read with
 * Jackson's streaming parser. The tree (ObjectMapper.readTree) made a deserialization context,
 * looked up its root deserializer and built the nodes for every GetCount: about a tenth of the
 * gateway's own code under GetCount in the profiles. Anything else (another field, a value that is
 * not a string, a field twice, a field missing, nesting, content after the object, JSON that does
 * not parse) reads as null, and the caller reads the body as a tree: every refusal stays the tree
 * path's, with its code and field.
 */
final class FlatStringFields {
    private static final JsonFactory FACTORY = new JsonFactory();

    private FlatStringFields() {}

    /**
     * The values of the named fields, in the order of the names, when the body is exactly an object
     * of those string fields in any order; else null.
     */
    static String[] read(Buffer body, String... names) {
        ByteBuf bytes = body.getByteBuf();
        if (bytes.hasArray()) {
            String[] values =
                    plain(bytes.array(), bytes.arrayOffset() + bytes.readerIndex(), bytes.readableBytes(), names);
            if (values != null) {
                return values;
            }
        }
        return parsed(body, names);
    }

    /** The same read by Jackson's streaming parser. */
    static String[] parsed(Buffer body, String... names) {
        try (JsonParser p = open(body)) {
            if (p == null || p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            String[] values = new String[names.length];
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                int at = indexOf(names, p.currentName());
                if (at < 0 || values[at] != null || p.nextToken() != JsonToken.VALUE_STRING) {
                    return null;
                }
                values[at] = p.getText();
            }
            if (t != JsonToken.END_OBJECT || p.nextToken() != null) {
                return null;
            }
            for (String v : values) {
                if (v == null) {
                    return null;
                }
            }
            return values;
        } catch (IOException e) { // not JSON: the tree path says how
            return null;
        }
    }

    /**
     * A streaming parser over the body where it lies (no copy), or null when the body is not on the
     * heap; Jackson's defaults, the tree's own.
     */
    static JsonParser open(Buffer body) throws IOException {
        ByteBuf bytes = body.getByteBuf();
        if (!bytes.hasArray()) {
            return null;
        }
        return FACTORY.createParser(bytes.array(), bytes.arrayOffset() + bytes.readerIndex(), bytes.readableBytes());
    }

    /**
     * The named fields of an object whose names and values are all strings of printable ASCII
     * without escapes, in any order, with JSON's whitespace around the tokens; null when the bytes
     * are anything else (an escape, a byte outside printable ASCII, another token, a field twice or
     * missing, content after the object), which Jackson then reads.
     */
    static String[] plain(byte[] b, int from, int length, String... names) {
        int end = from + length;
        int i = skipSpace(b, from, end);
        if (i >= end || b[i] != '{') {
            return null;
        }
        String[] values = new String[names.length];
        int found = 0;
        i = skipSpace(b, i + 1, end);
        while (i < end && b[i] == '"') {
            int nameEnd = stringEnd(b, i + 1, end);
            if (nameEnd < 0) {
                return null;
            }
            int at = indexOf(names, b, i + 1, nameEnd);
            i = skipSpace(b, nameEnd + 1, end);
            if (at < 0 || values[at] != null || i >= end || b[i] != ':') {
                return null;
            }
            i = skipSpace(b, i + 1, end);
            if (i >= end || b[i] != '"') {
                return null;
            }
            int valueEnd = stringEnd(b, i + 1, end);
            if (valueEnd < 0) {
                return null;
            }
            values[at] = new String(b, i + 1, valueEnd - i - 1, StandardCharsets.ISO_8859_1);
            found++;
            i = skipSpace(b, valueEnd + 1, end);
            if (i < end && b[i] == ',') {
                i = skipSpace(b, i + 1, end);
                if (i >= end || b[i] != '"') {
                    return null; // a trailing comma, or a comma before something that is no name
                }
            } else {
                break;
            }
        }
        if (i >= end || b[i] != '}' || found != names.length) {
            return null;
        }
        return skipSpace(b, i + 1, end) == end ? values : null;
    }

    /** The index of the closing quote of a plain string starting at `from`, or -1. */
    private static int stringEnd(byte[] b, int from, int end) {
        for (int i = from; i < end; i++) {
            byte c = b[i];
            if (c == '"') {
                return i;
            }
            if (c < 0x20 || c > 0x7e || c == '\\') {
                return -1;
            }
        }
        return -1;
    }

    private static int skipSpace(byte[] b, int i, int end) {
        while (i < end && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) {
            i++;
        }
        return i;
    }

    /** The index of the name spelled by b[from, to) (ASCII), or -1. */
    private static int indexOf(String[] names, byte[] b, int from, int to) {
        for (int n = 0; n < names.length; n++) {
            String name = names[n];
            if (name.length() != to - from) {
                continue;
            }
            int k = 0;
            while (k < name.length() && name.charAt(k) == b[from + k]) {
                k++;
            }
            if (k == name.length()) {
                return n;
            }
        }
        return -1;
    }

    static int indexOf(String[] names, String name) {
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name)) {
                return i;
            }
        }
        return -1;
    }
}
