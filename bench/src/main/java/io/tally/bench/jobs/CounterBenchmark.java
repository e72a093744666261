package io.tally.bench.jobs;

import io.tally.model.TallySchemas;
import io.tally.model.Topics;
import io.tally.serde.AvroSerde;
import io.tally.serde.RestSchemaRegistryClient;
import java.util.Map;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * Load for ./tally bench counters: {@code produce --namespace NS --events N --counters K --run R}
 * writes N AddCount events (delta 1, event time = send time, unique event ids) over K counters
 * straight to tally.counter.events, the rollup job's input; prints one JSON line.
 */
public final class CounterBenchmark {
    private CounterBenchmark() {}

    public static void main(String[] args) throws Exception {
        BenchArgs a = BenchArgs.parse(
                args,
                Map.of(
                        "bootstrap",
                        "127.0.0.1:9092",
                        "registry",
                        "http://127.0.0.1:8085",
                        "namespace",
                        "video_views",
                        "events",
                        "500000",
                        "counters",
                        "100000",
                        "run",
                        "r0"));
        if (!"produce".equals(a.command())) {
            throw new IllegalArgumentException(
                    "usage: CounterBenchmark produce [--namespace NS --events N --counters K --run R ...]");
        }
        Map<String, String> o = a.options();
        String topic = Topics.COUNTER_EVENTS;
        AvroSerde serde = new AvroSerde(new RestSchemaRegistryClient(o.get("registry")), false);
        int events = Integer.parseInt(o.get("events"));
        int counters = Integer.parseInt(o.get("counters"));
        String ns = o.get("namespace");
        String run = o.get("run");
        GenericData.EnumSymbol add = new GenericData.EnumSymbol(
                TallySchemas.COUNTER_EVENT.getField("op").schema(), "ADD");
        long t0 = System.nanoTime();
        try (BenchProducer producer = new BenchProducer(o.get("bootstrap"))) {
            for (int i = 0; i < events; i++) {
                String counter = run + "-" + (i % counters);
                GenericRecord rec = new GenericData.Record(TallySchemas.COUNTER_EVENT);
                rec.put("namespace", ns);
                rec.put("counter", counter);
                rec.put("op", add);
                rec.put("delta", 1L);
                rec.put("event_time", System.currentTimeMillis() * 1000 + i % 1000);
                rec.put("event_id", run + "-" + i);
                rec.put("source", "bench");
                producer.send(topic, ns + "/" + counter, serde.serialize(topic, rec));
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf(
                "{\"events\": %d, \"counters\": %d, \"seconds\": %.3f, \"events_per_s\": %.0f}%n",
                events, counters, seconds, events / seconds);
    }
}
