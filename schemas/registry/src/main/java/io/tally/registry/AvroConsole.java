package io.tally.registry;

import io.tally.serde.AvroSerde;
import io.tally.serde.RestSchemaRegistryClient;
import io.tally.serde.SerdeException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Avro console producer and consumer on Tally's serde, in the manner of Confluent's
 * kafka-avro-console-producer/consumer:
 * <pre>
 *   produce --topic T --schema-file F.avsc [--bootstrap B] [--registry URL]   (Avro JSON records on stdin, one a line)
 *   consume --topic T --max N [--timeout-ms MS] [--bootstrap B] [--registry URL] (one JSON record a line on stdout)
 * </pre>
 */
public final class AvroConsole {
    private AvroConsole() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: produce|consume --topic T ...");
        }
        Map<String, String> opt = new HashMap<>(Map.of(
                "bootstrap", "127.0.0.1:9092", "registry", "http://127.0.0.1:8085", "timeout-ms", "30000", "max", "1"));
        for (int i = 1; i + 1 < args.length; i += 2) {
            opt.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        AvroSerde serde = new AvroSerde(new RestSchemaRegistryClient(
                opt.get("registry"), java.time.Duration.ofSeconds(10), System.getenv("TALLY_ADMIN_TOKEN")));
        switch (args[0]) {
            case "produce" -> produce(serde, opt);
            case "consume" -> consume(serde, opt);
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    /** The bootstrap option and Kafka's client security from the environment (TALLY_KAFKA_SECURITY_PROTOCOL, ...). */
    private static Properties kafkaClient(Map<String, String> opt) {
        return io.tally.common.KafkaClientSecurity.from(io.tally.common.ServiceSettings.from(
                        io.tally.common.KafkaClientSecurity.FIELDS, System.getenv(), new String[0]))
                .client(opt.get("bootstrap"));
    }

    private static void produce(AvroSerde serde, Map<String, String> opt) throws Exception {
        Schema schema = new Schema.Parser().parse(Files.readString(Path.of(opt.get("schema-file"))));
        GenericDatumReader<GenericRecord> reader = new GenericDatumReader<>(schema);
        Properties p = kafkaClient(opt);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        int n = 0;
        try (KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isBlank()) {
                    continue;
                }
                GenericRecord rec = reader.read(null, DecoderFactory.get().jsonDecoder(schema, line));
                producer.send(new ProducerRecord<>(opt.get("topic"), serde.serialize(opt.get("topic"), rec)))
                        .get();
                n++;
            }
        }
        System.err.println("produced " + n + " records");
    }

    private static void consume(AvroSerde serde, Map<String, String> opt) {
        Properties p = kafkaClient(opt);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "avro-console-" + System.nanoTime());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        int max = Integer.parseInt(opt.get("max"));
        long deadline = System.currentTimeMillis() + Long.parseLong(opt.get("timeout-ms"));
        int n = 0;
        try (KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(opt.get("topic")));
            while (n < max && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    try {
                        GenericRecord rec = serde.deserialize(r.value());
                        System.out.println(GenericData.get().toString(rec));
                    } catch (SerdeException e) {
                        System.out.println("{\"error\": \"" + e.getMessage().replace("\"", "'") + "\"}");
                    }
                    n++;
                }
            }
        }
        System.err.println("consumed " + n + " records");
    }
}
