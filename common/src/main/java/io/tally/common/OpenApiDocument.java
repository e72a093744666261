package io.tally.common;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A service's OpenAPI document, read once from its jar: served as is at /openapi.json, and the
 * request bodies' schemas that refuse fields they do not name (additionalProperties: false), so
 * a misspelt field (an idempotency token under another name) is an error, not silently dropped.
 */
public final class OpenApiDocument {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final JsonNode root;
    private final byte[] bytes;
    /** A POST's route path as the router writes it (/v1/namespaces/:name) to its body's shape. */
    private final Map<String, Shape> postBodies = new HashMap<>();
    /** Each documented path as a pattern ({name}: one segment), with the methods it takes. */
    private final Map<String, Set<String>> methods = new LinkedHashMap<>();

    private final Map<String, Pattern> patterns = new LinkedHashMap<>();

    private OpenApiDocument(byte[] bytes) throws IOException {
        this.bytes = bytes;
        this.root = JSON.readTree(bytes);
        IdentityHashMap<JsonNode, Shape> shapes = new IdentityHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = root.path("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> p = paths.next();
            for (Iterator<Map.Entry<String, JsonNode>> ops = p.getValue().fields(); ops.hasNext(); ) {
                Map.Entry<String, JsonNode> op = ops.next();
                if (!op.getKey().equals("parameters")) {
                    patterns.computeIfAbsent(p.getKey(), OpenApiDocument::pattern);
                    methods.computeIfAbsent(p.getKey(), k -> new TreeSet<>())
                            .add(op.getKey().toUpperCase(Locale.ROOT));
                }
                JsonNode schema = op.getValue()
                        .path("requestBody")
                        .path("content")
                        .path("application/json")
                        .path("schema");
                if (!schema.isMissingNode() && op.getKey().equals("post")) {
                    postBodies.put(routerPath(p.getKey()), shape(schema, shapes));
                }
            }
        }
    }

    /** The document a class's jar holds at {@code resource} (next to that class). */
    public static OpenApiDocument load(Class<?> owner, String resource) {
        try (InputStream in = owner.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("no " + resource + " next to " + owner.getName());
            }
            return new OpenApiDocument(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public JsonNode root() {
        return root;
    }

    /** The document's bytes, as served. */
    public byte[] bytes() {
        return bytes.clone();
    }

    /** "/v1/namespaces/{name}" as a Vert.x route: "/v1/namespaces/:name". */
    public static String routerPath(String openApiPath) {
        return openApiPath.replaceAll("\\{([^}/]+)}", ":$1");
    }

    /**
     * The methods the document gives a request path ("/v1/namespaces/playback": GET, PUT, DELETE),
     * for the Allow header of a 405; empty for a path it does not have (a 404).
     */
    public Set<String> methodsOf(String requestPath) {
        for (Map.Entry<String, Pattern> e : patterns.entrySet()) {
            if (e.getValue().matcher(requestPath).matches()) {
                return methods.get(e.getKey());
            }
        }
        return Set.of();
    }

    private static Pattern pattern(String openApiPath) {
        StringBuilder re = new StringBuilder();
        for (String part : openApiPath.split("\\{[^}/]+}", -1)) {
            if (!re.isEmpty()) {
                re.append("[^/]+");
            }
            re.append(Pattern.quote(part));
        }
        return Pattern.compile(re.toString());
    }

    /**
     * The first field of {@code body} that the operation's request schema does not have, as a path
     * ("events[2].eventItem"), or null. Values of the wrong type are left to the parsers (their
     * errors are more precise); an operation without a documented body checks nothing.
     */
    public String unknownField(String method, String routePath, JsonNode body) {
        Shape shape = method.equals("POST") ? postBodies.get(routePath) : null;
        return shape == null ? null : unknown(shape, body);
    }

    /**
     * A request schema as the unknown-field check needs it, made once from the document (a request
     * is checked without following a $ref or making a path string, on the hot path of every write;
     * the path of an unknown field is made only when there is one).
     */
    private static final class Shape {
        final Map<String, Shape> properties = new HashMap<>();
        final List<Shape> allOf = new ArrayList<>();
        /** A nullable field's schema ({anyOf: [schema, null]}): checked instead of this one. */
        Shape nonNull;
        /** additionalProperties: false. */
        boolean closed;
        /** What a field the properties do not name is checked against (when not closed). */
        Shape additional;
        /** An array's items, or null. */
        Shape items;
    }

    private Shape shape(JsonNode schema, IdentityHashMap<JsonNode, Shape> made) {
        schema = resolve(schema);
        Shape known = made.get(schema);
        if (known != null) {
            return known; // one shape a schema: a schema that refers to itself ends here
        }
        Shape s = new Shape();
        made.put(schema, s);
        for (JsonNode part : schema.path("allOf")) {
            s.allOf.add(shape(part, made));
        }
        for (JsonNode alternative : schema.path("anyOf")) {
            if (!resolve(alternative).path("type").asText().equals("null")) {
                s.nonNull = shape(alternative, made);
                break;
            }
        }
        for (Iterator<Map.Entry<String, JsonNode>> it =
                        schema.path("properties").fields();
                it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            s.properties.put(f.getKey(), shape(f.getValue(), made));
        }
        JsonNode extra = schema.path("additionalProperties");
        s.closed = extra.isBoolean() && !extra.asBoolean();
        s.additional = s.closed ? null : shape(extra, made);
        if (schema.has("items")) {
            s.items = shape(schema.get("items"), made);
        }
        return s;
    }

    /** The path, relative to value, of its first field the shape does not have; or null. */
    private static String unknown(Shape shape, JsonNode value) {
        for (Shape part : shape.allOf) {
            String u = unknown(part, value);
            if (u != null) {
                return u;
            }
        }
        if (shape.nonNull != null) {
            return unknown(shape.nonNull, value);
        }
        if (value.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                Shape sub = shape.properties.get(f.getKey());
                if (sub == null && shape.closed) {
                    return f.getKey();
                }
                String u = unknown(sub != null ? sub : shape.additional, f.getValue());
                if (u != null) {
                    return under(f.getKey(), u);
                }
            }
        } else if (value.isArray() && shape.items != null) {
            for (int i = 0; i < value.size(); i++) {
                String u = unknown(shape.items, value.get(i));
                if (u != null) {
                    return under("[" + i + "]", u);
                }
            }
        }
        return null;
    }

    /** "events" and "[2].eventItem" -> "events[2].eventItem"; "[2]" and "eventItem" -> "[2].eventItem". */
    private static String under(String parent, String child) {
        return child.startsWith("[") ? parent + child : parent + "." + child;
    }

    /** A schema with its local $ref followed ("#/components/schemas/Event"). */
    private JsonNode resolve(JsonNode schema) {
        while (schema.has("$ref")) {
            String ref = schema.get("$ref").asText();
            if (!ref.startsWith("#/")) {
                throw new IllegalStateException("only local references are supported: " + ref);
            }
            schema = root.at(ref.substring(1));
            if (schema.isMissingNode()) {
                throw new IllegalStateException("the document has no " + ref);
            }
        }
        return schema;
    }
}
