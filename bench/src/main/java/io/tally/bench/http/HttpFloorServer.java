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
import io.vertx.core.AbstractVerticle;
import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * An HTTP server that does nothing but answer: every POST gets the same small JSON, the size of a
 * GetCount's answer. It is the floor a request's CPU cannot go under on this box's loopback with
 * the gateway's transport, so `bench transport` can say how much of a GetCount is the gateway's
 * own: {@code netty} is Netty's epoll transport and HTTP codec alone; {@code vertx} is a Vert.x
 * HTTP server (the gateway's framework, one server an event loop as the gateway has) without
 * vertx-web's router or any handler of Tally's; {@code vertx-kafka} is that server writing each
 * request's body to Kafka as the gateway's durable writes do (acks=all, idempotent, the same
 * linger, batch size and compression) and answering after the ack: a durable write's floor.
 *
 * <p>Usage: {@code HttpFloorServer netty|vertx <port>} or {@code HttpFloorServer vertx-kafka <port>
 * <bootstrap> <topic> <linger.ms> <compression>}; prints "listening" and serves until killed.
 */
public final class HttpFloorServer {
    /** The shape of a GetCount's answer: the same bytes on the wire. */
    static final byte[] ANSWER =
            "{\"count\":1234,\"counter_type\":\"EVENTUAL\",\"last_rollup_ts\":\"2026-11-29T03:00:00.000000Z\"}"
                    .getBytes(StandardCharsets.US_ASCII);

    private HttpFloorServer() {}

    public static void main(String[] args) throws Exception {
        boolean kafka = args.length == 6 && args[0].equals("vertx-kafka");
        if (!kafka && (args.length != 2 || !(args[0].equals("netty") || args[0].equals("vertx")))) {
            System.err.println(
                    "usage: HttpFloorServer netty|vertx <port> | vertx-kafka <port> <bootstrap> <topic> <linger.ms> <compression>");
            System.exit(2);
        }
        int port = Integer.parseInt(args[1]);
        int loops = Math.max(1, Runtime.getRuntime().availableProcessors()); // as the gateway
        if (args[0].equals("netty")) {
            netty(port, loops);
        } else if (kafka) {
            vertxKafka(port, loops, args[2], args[3], Integer.parseInt(args[4]), args[5]);
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
        Buffer answer = Buffer.buffer(ANSWER);
        serve(port, loops, req -> req.body().onSuccess(b -> answer(req, answer)));
    }

    private static void vertxKafka(
            int port, int loops, String bootstrap, String topic, int lingerMs, String compression) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 128 * 1024);
        KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        producer.partitionsFor(topic); // metadata before the first request
        Buffer answer = Buffer.buffer(ANSWER);
        serve(port, loops, req -> req.body().onSuccess(b -> {
            Context context = Vertx.currentContext();
            byte[] value = b.getBytes();
            // keyed as the gateway keys a counter's events: many keys over the topic's partitions
            byte[] key = Integer.toString(Arrays.hashCode(value)).getBytes(StandardCharsets.US_ASCII);
            producer.send(
                    new ProducerRecord<>(topic, key, value),
                    (md, err) -> context.runOnContext(v -> {
                        if (err == null) {
                            answer(req, answer);
                        } else {
                            req.response().setStatusCode(503).end();
                        }
                    }));
        }));
    }

    private static void serve(int port, int loops, Handler<HttpServerRequest> handler) throws Exception {
        Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
        if (!vertx.isNativeTransportEnabled()) {
            throw new IllegalStateException(
                    "Vert.x could not load its epoll transport", vertx.unavailableNativeTransportCause());
        }
        // each server started by a verticle instance of its own, so each on its own event loop, as
        // the gateway's (created one after another on this thread, all would share its one loop)
        vertx.deployVerticle(
                        () -> new AbstractVerticle() {
                            @Override
                            public void start(Promise<Void> listening) {
                                vertx.createHttpServer()
                                        .requestHandler(handler)
                                        .listen(port, "127.0.0.1")
                                        .<Void>mapEmpty()
                                        .onComplete(listening);
                            }
                        },
                        new DeploymentOptions().setInstances(loops))
                .toCompletionStage()
                .toCompletableFuture()
                .get();
    }

    private static void answer(HttpServerRequest req, Buffer answer) {
        req.response().putHeader("Content-Type", "application/json").end(answer);
    }
}
