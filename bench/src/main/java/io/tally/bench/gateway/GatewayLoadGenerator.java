package io.tally.bench.gateway;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Load for the gateway benchmark (./tally bench gateway), printing one JSON line a phase:
 * <pre>
 *   batch --seconds S --concurrency C --events N --value-bytes B   closed loop of WriteEventRecordsSync
 *   rate  --seconds S --rps R [--endpoint AddCount|GetCount] [--namespace NS] [--counters N]
 *                                                                  open loop at a fixed rate over N counters
 * </pre>
 * Latency in the open loop counts from when a request was due, not when it was sent, so a
 * stalled server cannot hide its queueing (no coordinated omission).
 */
public final class GatewayLoadGenerator {
    private GatewayLoadGenerator() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>(Map.of(
                "host",
                "127.0.0.1",
                "port",
                "8080",
                "seconds",
                "20",
                "concurrency",
                "8",
                "events",
                "100",
                "value-bytes",
                "150",
                "rps",
                "5000"));
        for (int i = 1; i + 1 < args.length; i += 2) {
            o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        Vertx vertx = Vertx.vertx();
        HttpClient http = vertx.createHttpClient(
                new HttpClientOptions()
                        .setDefaultHost(o.get("host"))
                        .setDefaultPort(Integer.parseInt(o.get("port")))
                        .setKeepAlive(true),
                new PoolOptions().setHttp1MaxSize(256));
        try {
            if (args[0].equals("batch")) {
                batch(http, o);
            } else {
                rate(vertx, http, o);
            }
        } finally {
            vertx.close();
        }
    }

    private static void batch(HttpClient http, Map<String, String> o) throws Exception {
        int seconds = Integer.parseInt(o.get("seconds"));
        int concurrency = Integer.parseInt(o.get("concurrency"));
        int events = Integer.parseInt(o.get("events"));
        byte[] raw = new byte[Integer.parseInt(o.get("value-bytes"))];
        new Random(42).nextBytes(raw);
        String value = Base64.getEncoder().encodeToString(raw);
        AtomicLong seq = new AtomicLong();
        CountDownLatch warmed = new CountDownLatch(concurrency);
        long warmEnd = System.nanoTime() + Long.parseLong(o.getOrDefault("warmup-seconds", "5")) * 1_000_000_000L;
        for (int c = 0; c < concurrency; c++) { // warm-up: same load, not counted
            sendBatch(http, events, value, seq, new AtomicLong(), new AtomicLong(), warmEnd, warmed);
        }
        warmed.await();
        AtomicLong okEvents = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        CountDownLatch done = new CountDownLatch(concurrency);
        long t0 = System.nanoTime();
        for (int c = 0; c < concurrency; c++) {
            sendBatch(http, events, value, seq, okEvents, failed, end, done);
        }
        done.await();
        double elapsed = (System.nanoTime() - t0) / 1e9;
        System.out.printf(
                "{\"phase\":\"batch\",\"events_per_s\":%.0f,\"requests_failed\":%d,\"events\":%d,\"seconds\":%.1f,"
                        + "\"event_bytes\":%d}%n",
                okEvents.get() / elapsed, failed.get(), okEvents.get(), elapsed, raw.length);
    }

    private static void sendBatch(
            HttpClient http,
            int events,
            String value,
            AtomicLong seq,
            AtomicLong ok,
            AtomicLong failed,
            long end,
            CountDownLatch done) {
        if (System.nanoTime() > end) {
            done.countDown();
            return;
        }
        String now = Instant.now().toString();
        StringBuilder body =
                new StringBuilder(events * (value.length() + 120)).append("{\"namespace\":\"playback\",\"events\":[");
        for (int i = 0; i < events; i++) {
            long n = seq.incrementAndGet();
            body.append(i == 0 ? "" : ",")
                    .append("{\"timeSeriesId\":\"bench-")
                    .append(n % 1000)
                    .append("\",\"eventTime\":\"")
                    .append(now)
                    .append("\",\"eventId\":\"b")
                    .append(n)
                    .append("\",\"eventItems\":[{\"eventItemKey\":\"v\",\"eventItemValue\":\"")
                    .append(value)
                    .append("\"}]}");
        }
        body.append("]}");
        http.request(new RequestOptions()
                        .setMethod(HttpMethod.POST)
                        .setURI("/v1/timeseries/WriteEventRecordsSync")
                        .putHeader("Content-Type", "application/json"))
                .compose(req -> req.send(Buffer.buffer(body.toString())))
                .onComplete(ar -> {
                    if (ar.succeeded() && ar.result().statusCode() == 200) {
                        ok.addAndGet(events);
                    } else {
                        failed.incrementAndGet();
                    }
                    sendBatch(http, events, value, seq, ok, failed, end, done);
                });
    }

    private static void rate(Vertx vertx, HttpClient http, Map<String, String> o) throws Exception {
        int rps = Integer.parseInt(o.get("rps"));
        String endpoint = o.getOrDefault("endpoint", "AddCount");
        String ns = o.getOrDefault("namespace", "video_views");
        int counters = Integer.parseInt(o.getOrDefault("counters", "10000"));
        // Warm-up at the same rate, drained completely before the measured phase starts.
        openLoop(
                vertx,
                http,
                rps,
                Integer.parseInt(o.getOrDefault("warmup-seconds", "5")) * rps,
                "w",
                endpoint,
                ns,
                counters);
        int total = Integer.parseInt(o.get("seconds")) * rps;
        long t0 = System.nanoTime();
        long[][] result = openLoop(vertx, http, rps, total, "m", endpoint, ns, counters);
        double elapsed = (System.nanoTime() - t0) / 1e9;
        long[] lat = result[0];
        long ok = Arrays.stream(result[1]).filter(c -> c == 200).count();
        Arrays.sort(lat);
        System.out.printf(
                "{\"phase\":\"rate\",\"endpoint\":\"" + endpoint
                        + "\",\"target_rps\":%d,\"achieved_rps\":%.0f,\"ok\":%d,\"failed\":%d,"
                        + "\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"p999_ms\":%.2f,\"max_ms\":%.2f}%n",
                rps,
                total / elapsed,
                ok,
                total - ok,
                lat[total / 2] / 1e6,
                lat[(int) (total * 0.99)] / 1e6,
                lat[(int) (total * 0.999)] / 1e6,
                lat[total - 1] / 1e6);
    }

    /** Sends total requests at rps; returns their latencies (from due time) and status codes. */
    private static long[][] openLoop(
            Vertx vertx, HttpClient http, int rps, int total, String tag, String endpoint, String ns, int counters)
            throws Exception {
        long[] latencies = new long[total];
        long[] codes = new long[total];
        CountDownLatch done = new CountDownLatch(total);
        long start = System.nanoTime() + 100_000_000L;
        long periodNanos = 1_000_000_000L / rps;
        AtomicLong next = new AtomicLong();
        // A 1 ms timer sends every request that has come due, each stamped with its due time.
        vertx.setPeriodic(1, id -> {
            long now = System.nanoTime();
            while (true) {
                long i = next.get();
                if (i >= total) {
                    vertx.cancelTimer(id);
                    return;
                }
                if (start + i * periodNanos > now) {
                    return;
                }
                next.incrementAndGet();
                long due = start + i * periodNanos;
                String body = endpoint.equals("GetCount")
                        ? "{\"namespace\":\"" + ns + "\",\"counter_name\":\"bench-" + (i % counters) + "\"}"
                        : "{\"namespace\":\"" + ns + "\",\"counter_name\":\"bench-" + (i % counters)
                                + "\",\"delta\":1,\"idempotency_token\":{\"token\":\"" + tag + i + "-" + start
                                + "\",\"generation_time\":\"" + Instant.now() + "\"}}";
                int idx = (int) i;
                http.request(new RequestOptions()
                                .setMethod(HttpMethod.POST)
                                .setURI("/v1/counter/" + endpoint)
                                .putHeader("Content-Type", "application/json"))
                        .compose(req -> req.send(body))
                        .onComplete(ar -> {
                            latencies[idx] = System.nanoTime() - due;
                            codes[idx] = ar.succeeded() ? ar.result().statusCode() : -1;
                            done.countDown();
                        });
            }
        });
        done.await();
        return new long[][] {latencies, codes};
    }
}
