package io.tally.bench.registry;

import io.tally.model.TallySchemas;
import io.tally.model.Topics;
import io.tally.serde.AvroSerde;
import io.tally.serde.RestSchemaRegistryClient;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;

/**
 * Measures, in one run against the running registry: the serde's encode/decode cost per
 * record against plain Avro binary encoding of the same record (the ceiling), and the
 * registry's lookup latency. Prints a report; never fails on numbers.
 */
public final class SerdeBenchmark {
    private SerdeBenchmark() {}

    public static void main(String[] args) throws Exception {
        String url = args.length > 0 ? args[0] : "http://127.0.0.1:8085";
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 300_000;
        GenericRecord rec = sample();
        GenericDatumWriter<GenericRecord> writer = new GenericDatumWriter<>(rec.getSchema());
        GenericDatumReader<GenericRecord> reader = new GenericDatumReader<>(rec.getSchema());
        AvroSerde serde = new AvroSerde(new RestSchemaRegistryClient(
                url, java.time.Duration.ofSeconds(10), System.getenv("TALLY_ADMIN_TOKEN")));
        String topic = Topics.TIMESERIES_EVENTS;
        byte[] plainBytes = plainEncode(writer, rec);
        byte[] framed = serde.serialize(topic, rec); // registers/looks up once; cached afterwards
        System.out.printf("record: TimeSeriesEvent, %d B Avro binary, %d B framed%n", plainBytes.length, framed.length);

        double plainEnc = 0, serdeEnc = 0, plainDec = 0, serdeDec = 0;
        for (int round = 0; round < 3; round++) { // round 0 warms the JIT; the last two are kept
            double pe = time(n, () -> plainEncode(writer, rec));
            double se = time(n, () -> serde.serialize(topic, rec));
            double pd = time(n, () -> plainDecode(reader, plainBytes));
            double sd = time(n, () -> serde.deserialize(framed));
            if (round > 0) {
                plainEnc += pe / 2;
                serdeEnc += se / 2;
                plainDec += pd / 2;
                serdeDec += sd / 2;
            }
        }
        System.out.printf(
                "encode: plain Avro %.0f ns/record, Tally serde %.0f ns/record, ratio %.2f%n",
                plainEnc, serdeEnc, serdeEnc / plainEnc);
        System.out.printf(
                "decode: plain Avro %.0f ns/record, Tally serde %.0f ns/record, ratio %.2f%n",
                plainDec, serdeDec, serdeDec / plainDec);

        HttpClient http = HttpClient.newHttpClient();
        int id = ByteBuffer.wrap(framed, 1, 4).getInt();
        String body = "{\"schema\":"
                + com.fasterxml.jackson.databind.node.TextNode.valueOf(
                        rec.getSchema().toString()) + "}";
        report(
                "registry GET /schemas/ids/{id}",
                latencies(
                        2000,
                        () -> http.send(
                                HttpRequest.newBuilder(URI.create(url + "/schemas/ids/" + id))
                                        .build(),
                                HttpResponse.BodyHandlers.discarding())));
        report(
                "registry POST /subjects/{s} (lookup)",
                latencies(
                        2000,
                        () -> http.send(
                                HttpRequest.newBuilder(URI.create(url + "/subjects/" + topic + "-value"))
                                        .header("Content-Type", "application/vnd.schemaregistry.v1+json")
                                        .POST(HttpRequest.BodyPublishers.ofString(body))
                                        .build(),
                                HttpResponse.BodyHandlers.discarding())));
    }

    static GenericRecord sample() {
        List<GenericRecord> items = new ArrayList<>();
        for (String k : new String[] {"deviceType", "duration", "title"}) {
            items.add(new GenericRecordBuilder(TallySchemas.EVENT_ITEM)
                    .set("key", k)
                    .set("value", ByteBuffer.wrap(new byte[40]))
                    .build());
        }
        return new GenericRecordBuilder(TallySchemas.TIME_SERIES_EVENT)
                .set("namespace", "playback")
                .set("time_series_id", "profile-0123456789")
                .set("event_time", 1_763_800_000_000_000L)
                .set("event_id", "6f1c2d7e-9a8b-4c3d-8e7f-0a1b2c3d4e5f")
                .set("items", items)
                .set("source", "bench")
                .build();
    }

    static byte[] plainEncode(GenericDatumWriter<GenericRecord> writer, GenericRecord rec) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream(128);
            BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(out, null);
            writer.write(rec, enc);
            enc.flush();
            return out.toByteArray();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static GenericRecord plainDecode(GenericDatumReader<GenericRecord> reader, byte[] bytes) {
        try {
            BinaryDecoder dec = DecoderFactory.get().binaryDecoder(bytes, null);
            return reader.read(null, dec);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    interface Op {
        Object run() throws Exception;
    }

    static double time(int n, Op op) throws Exception {
        Object sink = null;
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            sink = op.run();
        }
        long t = System.nanoTime() - t0;
        if (sink == null) {
            throw new IllegalStateException();
        }
        return (double) t / n;
    }

    static long[] latencies(int n, Op op) throws Exception {
        for (int i = 0; i < 200; i++) {
            op.run();
        }
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            op.run();
            out[i] = System.nanoTime() - t0;
        }
        Arrays.sort(out);
        return out;
    }

    static void report(String what, long[] sorted) {
        System.out.printf(
                "%s: p50 %.2f ms, p99 %.2f ms over %d calls%n",
                what, sorted[sorted.length / 2] / 1e6, sorted[(int) (sorted.length * 0.99)] / 1e6, sorted.length);
    }
}
