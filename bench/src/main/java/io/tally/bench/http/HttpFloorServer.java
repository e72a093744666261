package io.tally.bench.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;

/**
 * An HTTP server that does nothing but answer: every POST gets the same small JSON, the size of a
 * GetCount's answer. It is the floor a request's CPU cannot go under on this box's loopback with
 * the gateway's transport, so `bench transport` can say how much of a GetCount is the gateway's
 * own: {@code netty} is Netty's epoll transport and HTTP codec alone; {@code vertx} is a Vert.x
 * HTTP server (the gateway's framework, one server an event loop as the gateway has) without
 * vertx-web's router or any handler of Tally's.
 *
 * <p>Usage: {@code HttpFloorServer netty|vertx <port>}; prints "listening" and serves until killed.
 */
public final class HttpFloorServer {
    /** The shape of a GetCount's answer: the same bytes on the wire. */
    static final byte[] ANSWER =
            "{\"count\":1234,\"counter_type\":\"EVENTUAL\",\"last_rollup_ts\":\"2026-11-29T03:00:00.000000Z\"}"
                    .getBytes(StandardCharsets.US_ASCII);

    private HttpFloorServer() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[0].equals("netty") || args[0].equals("vertx"))) {
            System.err.println("usage: HttpFloorServer netty|vertx <port>");
            System.exit(2);
        }
        int port = Integer.parseInt(args[1]);
        int loops = Math.max(1, Runtime.getRuntime().availableProcessors()); // as the gateway
        if (args[0].equals("netty")) {
            netty(port, loops);
        } else {
            vertx(port, loops);
        }
        System.out.println("listening on 127.0.0.1:" + port);
        Thread.currentThread().join();
    }

    private static void netty(int port, int loops) throws InterruptedException {
        EventLoopGroup group = new EpollEventLoopGroup(loops);
        new ServerBootstrap()
                .group(group)
                .channel(EpollServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast(new HttpServerCodec())
                                .addLast(new HttpObjectAggregator(64 * 1024))
                                .addLast(new Answer());
                    }
                })
                .bind("127.0.0.1", port)
                .sync();
    }

    private static final class Answer extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            ByteBuf body = Unpooled.wrappedBuffer(ANSWER);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
            response.headers()
                    .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, ANSWER.length);
            ctx.writeAndFlush(response);
        }
    }

    private static void vertx(int port, int loops) throws Exception {
        Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
        if (!vertx.isNativeTransportEnabled()) {
            throw new IllegalStateException(
                    "Vert.x could not load its epoll transport", vertx.unavailableNativeTransportCause());
        }
        Buffer answer = Buffer.buffer(ANSWER);
        for (int i = 0; i < loops; i++) {
            vertx.createHttpServer()
                    .requestHandler(req -> req.body().onSuccess(b -> req.response()
                            .putHeader("Content-Type", "application/json")
                            .end(answer)))
                    .listen(port, "127.0.0.1")
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get();
        }
    }
}
