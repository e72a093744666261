package io.tally.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tally.gateway.service.ErrorCode;
import io.tally.gateway.service.NamespaceResolver;
import io.tally.gateway.service.ServiceException;
import io.tally.model.Micros;
import io.tally.namespace.NamespaceConfig;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.RoutingContext;
import java.time.format.DateTimeParseException;

/** Reading a request's JSON with errors that name the field (400 INVALID_FIELD). */
final class RequestJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RequestJson() {}

    static JsonNode required(JsonNode parent, String key, String path) {
        JsonNode v = parent.get(key);
        if (v == null || v.isNull()) {
            throw new ServiceException(ErrorCode.MISSING_FIELD, path + " is required", path);
        }
        return v;
    }

    static String text(JsonNode parent, String key, String path, int maxLength) {
        JsonNode v = required(parent, key, path);
        if (!v.isTextual()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " must be a string", path);
        }
        return checkedId(v.asText(), path, maxLength);
    }

    static String optionalText(JsonNode parent, String key, String path, int maxLength) {
        JsonNode v = parent.get(key);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " must be a string", path);
        }
        return checkedId(v.asText(), path, maxLength);
    }

    /** Identifiers (ids, names, keys, tokens): non-empty, bounded, no control characters. */
    static String checkedId(String s, String path, int maxLength) {
        if (s.isEmpty()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " must not be empty", path);
        }
        if (s.length() > maxLength) {
            throw new ServiceException(
                    ErrorCode.FIELD_TOO_LONG, path + " is longer than " + maxLength + " characters", path);
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c)) {
                throw new ServiceException(ErrorCode.INVALID_FIELD, path + " contains a control character", path);
            }
            // a lone surrogate is no character: UTF-8 (Avro, Cassandra) would store it as '?', so
            // two different ids would become one
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new ServiceException(
                        ErrorCode.INVALID_FIELD, path + " holds a lone UTF-16 surrogate (not a character)", path);
            }
        }
        return s;
    }

    static long integer(JsonNode parent, String key, String path) {
        JsonNode v = required(parent, key, path);
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " must be a whole number (64-bit)", path);
        }
        return v.asLong();
    }

    /** An optional true or false; `dflt` when absent or null (a string "true" is refused, not read as false). */
    static boolean optionalBoolean(JsonNode parent, String key, String path, boolean dflt) {
        JsonNode v = parent.get(key);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " must be true or false", path);
        }
        return v.asBoolean();
    }

    /** An optional whole number in [min, max]; `dflt` when absent or null. */
    static long boundedInteger(JsonNode body, String key, long dflt, long min, long max) {
        return boundedInteger(body, key, key, dflt, min, max);
    }

    /** The same, for a field below the top (path names it in the refusal). */
    static long boundedInteger(JsonNode parent, String key, String path, long dflt, long min, long max) {
        JsonNode v = parent.get(key);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isIntegralNumber() || v.asLong() < min || v.asLong() > max) {
            throw new ServiceException(
                    ErrorCode.INVALID_FIELD, path + " must be a whole number from " + min + " to " + max, path);
        }
        return v.asLong();
    }

    /** An ISO-8601 instant ("2024-10-03T21:24:23.988Z"), as microseconds since the epoch. */
    static long instantMicros(JsonNode parent, String key, String path) {
        JsonNode v = required(parent, key, path);
        if (!v.isTextual()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " must be an ISO-8601 timestamp string", path);
        }
        return instantMicros(v.asText(), path);
    }

    /** The same from the string sent. */
    static long instantMicros(String text, String path) {
        try {
            return Micros.parse(text);
        } catch (DateTimeParseException | ArithmeticException e) {
            throw new ServiceException(
                    ErrorCode.INVALID_FIELD,
                    path + " '" + text + "' is not an ISO-8601 timestamp such as 2024-10-03T21:24:23.988Z",
                    path);
        }
    }

    static JsonNode array(JsonNode parent, String key, String path) {
        JsonNode v = required(parent, key, path);
        if (!v.isArray()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " must be an array", path);
        }
        return v;
    }

    static JsonNode object(JsonNode v, String path) {
        if (v == null || !v.isObject()) {
            throw new ServiceException(ErrorCode.INVALID_FIELD, path + " must be a JSON object", path);
        }
        return v;
    }

    /** The namespace the body's "namespace" field names, resolved (of the endpoint's kind). */
    static NamespaceConfig namespace(
            JsonNode body, NamespaceResolver namespaces, NamespaceConfig.Kind kind, int maxIdLength) {
        return namespaces.require(text(body, "namespace", "namespace", maxIdLength), kind);
    }

    /** The request's JSON body: 415 for another content type, 400 for what does not parse. */
    static JsonNode body(RoutingContext ctx) {
        String routePath =
                ctx.currentRoute() == null ? null : ctx.currentRoute().getPath();
        return body(
                ctx.request().getHeader("Content-Type"),
                ctx.body().buffer(),
                ctx.request().method(),
                routePath);
    }

    /**
     * The same from a request's parts: its Content-Type, its body (null when empty), its method and
     * the route path its fields are checked against (null: not checked).
     */
    static JsonNode body(String contentType, io.vertx.core.buffer.Buffer buffer, HttpMethod method, String routePath) {
        if (!isJson(contentType)) {
            throw new ServiceException(ErrorCode.UNSUPPORTED_MEDIA_TYPE, "send the request as application/json", null);
        }
        JsonNode body;
        try {
            if (buffer == null) {
                body = JSON.readTree(new byte[0]);
            } else {
                // parsed where the body lies, not from a copy of it (Buffer.getBytes copied every body)
                io.netty.buffer.ByteBuf bytes = buffer.getByteBuf();
                body = bytes.hasArray()
                        ? JSON.readTree(bytes.array(), bytes.arrayOffset() + bytes.readerIndex(), bytes.readableBytes())
                        : JSON.readTree(buffer.getBytes());
            }
        } catch (Exception e) {
            throw new ServiceException(
                    ErrorCode.MALFORMED_JSON, "the body is not valid JSON: " + firstLine(e.getMessage()), null);
        }
        if (body == null || body.isMissingNode()) {
            throw new ServiceException(ErrorCode.MALFORMED_JSON, "the body is empty", null);
        }
        // the data plane's bodies name only their schema's fields; the admin API's namespace
        // configs have the parser's own check (INVALID_NAMESPACE_CONFIG names the field)
        if (method == HttpMethod.POST && routePath != null) {
            String unknown = GatewayOpenApi.DOCUMENT.unknownField("POST", routePath, body);
            if (unknown != null) {
                throw new ServiceException(
                        ErrorCode.UNKNOWN_FIELD,
                        unknown + " is not a field of this request (see /openapi.json)",
                        unknown);
            }
        }
        return body;
    }

    /** Whether a Content-Type is application/json, with or without parameters (charset). */
    static boolean isJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        int end = contentType.indexOf(';');
        String type = (end < 0 ? contentType : contentType.substring(0, end)).trim();
        return type.equalsIgnoreCase("application/json");
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
