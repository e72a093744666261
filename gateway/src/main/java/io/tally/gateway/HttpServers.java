package io.tally.gateway;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;

/**
 * HTTP servers sharing one port, each on an event loop of its own.
 *
 * <p>Each server is started by its own verticle instance, because Vert.x binds a server to the
 * context it is created on: servers created one after another on a thread outside Vert.x all get
 * that thread's one context, so they all ran on a single event loop whatever their number (the
 * gateway had one {@code vert.x-eventloop} thread however many servers it started). A verticle
 * instance gets a fresh event-loop context, and Vert.x hands those out round robin over its loops.
 */
final class HttpServers {
    private final Vertx vertx;
    private final String deployment;
    private final List<HttpServer> servers;

    private HttpServers(Vertx vertx, String deployment, List<HttpServer> servers) {
        this.vertx = vertx;
        this.deployment = deployment;
        this.servers = List.copyOf(servers);
    }

    /**
     * Starts {@code loops} servers on {@code host:port}, each answering with {@code handler};
     * returns once all listen. Port 0: one port the system picks, shared by them all. A failure to
     * bind is thrown (Vert.x undeploys the instances that had started).
     */
    static HttpServers start(
            Vertx vertx,
            HttpServerOptions options,
            Handler<HttpServerRequest> handler,
            String host,
            int port,
            int loops)
            throws InterruptedException {
        if (loops < 1) {
            throw new IllegalArgumentException("event loops must be 1 or more, got " + loops);
        }
        List<HttpServer> started = new CopyOnWriteArrayList<>();
        // Vert.x gives each server of a listen on port 0 a port of its own; a negative port is its
        // way to say "one port the system picks, shared by every server asking for it"
        int asked = port == 0 ? -1 : port;
        String deployment;
        try {
            deployment = vertx.deployVerticle(
                            () -> new AbstractVerticle() {
                                @Override
                                public void start(Promise<Void> listening) {
                                    // created here, on this instance's own event-loop context
                                    vertx.createHttpServer(options)
                                            .requestHandler(handler)
                                            .listen(asked, host)
                                            .onSuccess(started::add)
                                            .<Void>mapEmpty()
                                            .onComplete(listening);
                                }
                            },
                            new DeploymentOptions().setInstances(loops))
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get();
        } catch (ExecutionException e) {
            throw new IllegalStateException(
                    "HTTP server did not start on " + host + ":" + port + ": "
                            + e.getCause().getMessage(),
                    e.getCause());
        }
        HttpServers servers = new HttpServers(vertx, deployment, started);
        if (started.stream().mapToInt(HttpServer::actualPort).distinct().count() != 1) {
            servers.close();
            throw new IllegalStateException("HTTP servers on " + host + ":" + port + " got different ports");
        }
        return servers;
    }

    /** The port every server listens on. */
    int port() {
        return servers.get(0).actualPort();
    }

    int size() {
        return servers.size();
    }

    /** Stops accepting and closes every server (undeploying their verticles), waiting for it. */
    void close() {
        vertx.undeploy(deployment).toCompletionStage().toCompletableFuture().join();
    }
}
