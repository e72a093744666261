package io.tally.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServerOptions;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Servers sharing a port each answer on an event loop of their own. */
class HttpServersTest {
    final Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(4));
    final Set<String> loops = ConcurrentHashMap.newKeySet();

    @AfterEach
    void close() {
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    HttpServers start(int port, int loops) throws InterruptedException {
        return HttpServers.start(
                vertx,
                new HttpServerOptions(),
                request -> {
                    this.loops.add(Thread.currentThread().getName());
                    request.response().end("ok");
                },
                "127.0.0.1",
                port,
                loops);
    }

    /** New connections, so Vert.x's round robin over the servers hands them to each in turn. */
    void askOverNewConnections(int port, int times) throws Exception {
        for (int i = 0; i < times; i++) {
            try (Socket socket = new Socket("127.0.0.1", port)) {
                socket.getOutputStream()
                        .write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                                .getBytes(StandardCharsets.US_ASCII));
                String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                assertThat(answer).startsWith("HTTP/1.1 200").endsWith("ok");
            }
        }
    }

    @Test
    void two_servers_on_one_port_answer_on_two_event_loops() throws Exception {
        HttpServers servers = start(0, 2);
        assertThat(servers.size()).isEqualTo(2);
        askOverNewConnections(servers.port(), 6);
        assertThat(loops).hasSize(2).allMatch(name -> name.startsWith("vert.x-eventloop-thread-"));
    }

    @Test
    void one_server_answers_on_one_event_loop() throws Exception {
        HttpServers servers = start(0, 1);
        askOverNewConnections(servers.port(), 4);
        assertThat(loops).hasSize(1);
    }

    @Test
    void a_port_taken_by_another_process_fails_the_start_with_its_address() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"))) {
            assertThatThrownBy(() -> start(taken.getLocalPort(), 2))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("127.0.0.1:" + taken.getLocalPort());
        }
    }

    @Test
    void closed_servers_refuse_new_connections() throws Exception {
        HttpServers servers = start(0, 2);
        int port = servers.port();
        servers.close();
        assertThatThrownBy(() -> askOverNewConnections(port, 1)).isInstanceOf(java.io.IOException.class);
    }

    @Test
    void no_event_loop_is_refused() {
        assertThatThrownBy(() -> start(0, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
