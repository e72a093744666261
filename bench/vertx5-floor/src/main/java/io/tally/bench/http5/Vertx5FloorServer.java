package io.tally.bench.http5;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import java.nio.charset.StandardCharsets;

/**
 * The {@code vertx} floor of {@code bench transport} on Vert.x 5 and Netty 4.2: a Vert.x HTTP
 * server, one an event loop on the native epoll transport, with no router and no handler of
 * Tally's, answering every POST with the bytes of a GetCount's answer. Against the Vert.x 4.5 floor
 * (bench's HttpFloorServer, the gateway's framework today) it says what the gateway's HTTP layer
 * would cost after a migration, before one is made.
 *
 * <p>Usage: {@code Vertx5FloorServer vertx5 <port>}; prints "listening" and serves until killed.
 */
public final class Vertx5FloorServer {
    /** The bytes of bench's HttpFloorServer.ANSWER (a GetCount's answer); that class is on Vert.x 4. */
    static final byte[] ANSWER =
            "{\"count\":1234,\"counter_type\":\"EVENTUAL\",\"last_rollup_ts\":\"2026-11-29T03:00:00.000000Z\"}"
                    .getBytes(StandardCharsets.US_ASCII);

    private Vertx5FloorServer() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !args[0].equals("vertx5")) {
            System.err.println("usage: Vertx5FloorServer vertx5 <port>");
            System.exit(2);
        }
        int port = Integer.parseInt(args[1]);
        int loops = Math.max(1, Runtime.getRuntime().availableProcessors()); // as the gateway
        Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
        if (!vertx.isNativeTransportEnabled()) {
            throw new IllegalStateException(
                    "Vert.x could not load its epoll transport", vertx.unavailableNativeTransportCause());
        }
        Buffer answer = Buffer.buffer(ANSWER);
        // each server started by a verticle instance of its own, so each on its own event loop, as
        // the gateway's
        vertx.deployVerticle(
                        () -> new VerticleBase() {
                            @Override
                            public Future<?> start() {
                                return vertx.createHttpServer()
                                        .requestHandler(req -> req.body().onSuccess(b -> answer(req, answer)))
                                        .listen(port, "127.0.0.1");
                            }
                        },
                        new DeploymentOptions().setInstances(loops))
                .await();
        System.out.println("listening on 127.0.0.1:" + port);
        Thread.currentThread().join();
    }

    private static void answer(HttpServerRequest req, Buffer answer) {
        req.response().putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(answer);
    }
}
