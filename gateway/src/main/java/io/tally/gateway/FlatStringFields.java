package io.tally.gateway;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;

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

    static int indexOf(String[] names, String name) {
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name)) {
                return i;
            }
        }
        return -1;
    }
}
