package io.tally.gateway;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The data plane's POST endpoints answered before vertx-web's router, whose work a request (a
 * routing context, the walk over the routes, the body handler, an end handler) was 7-8% of the
 * gateway's profile under GetCount; the gateway's GetCount cost 6 µs more than a bare Vert.x
 * server that only answers (bench transport, Tally's own handler included).
 *
 * <p>It takes a POST to one of its exact paths with a Content-Length within the body limit and no
 * Expect or Transfer-Encoding header; the router answers every other request, so a wrong method, a
 * trailing slash, a chunked or oversize body get the router's answers (405, 413) as before. Each
 * endpoint's answer is the route's own (GatewayHttpApi registers both from one handler), and it is
 * counted in the request metrics under the same name.
 */
final class DirectEndpoints implements Handler<HttpServerRequest> {
    /** An endpoint: its name in the metrics, and what answers a request given its body. */
    record Endpoint(String name, BiConsumer<HttpServerRequest, Buffer> answer) {}

    private final Handler<HttpServerRequest> router;
    private final Map<String, Endpoint> byPath;
    private final GatewayMetrics metrics;
    private final int maxBodyBytes;

    DirectEndpoints(
            Handler<HttpServerRequest> router, Map<String, Endpoint> byPath, GatewayMetrics metrics, int maxBodyBytes) {
        this.router = router;
        this.byPath = Map.copyOf(byPath);
        this.metrics = metrics;
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    public void handle(HttpServerRequest request) {
        Endpoint endpoint = taken(request);
        if (endpoint == null) {
            router.handle(request);
            return;
        }
        long t0 = System.nanoTime();
        request.response()
                .endHandler(v -> metrics.request(
                        endpoint.name(), request.response().getStatusCode(), (System.nanoTime() - t0) / 1e9));
        request.body().onComplete(read -> {
            if (read.succeeded()) { // a failed read is a closed connection: nobody to answer
                endpoint.answer().accept(request, read.result());
            }
        });
    }

    /** The endpoint that answers this request here, or null for the router. */
    Endpoint taken(HttpServerRequest request) {
        if (request.method() != HttpMethod.POST) {
            return null;
        }
        Endpoint endpoint = byPath.get(request.path());
        if (endpoint == null
                || request.getHeader(HttpHeaders.EXPECT) != null
                || request.getHeader(HttpHeaders.TRANSFER_ENCODING) != null) {
            return null;
        }
        return withinLimit(request.getHeader(HttpHeaders.CONTENT_LENGTH), maxBodyBytes) ? endpoint : null;
    }

    /** Whether a Content-Length header is a length within the limit (absent or unreadable: no). */
    static boolean withinLimit(String contentLength, int maxBodyBytes) {
        if (contentLength == null || contentLength.isEmpty() || contentLength.length() > 10) {
            return false;
        }
        for (int i = 0; i < contentLength.length(); i++) {
            if (contentLength.charAt(i) < '0' || contentLength.charAt(i) > '9') {
                return false;
            }
        }
        return Long.parseLong(contentLength) <= maxBodyBytes;
    }
}
