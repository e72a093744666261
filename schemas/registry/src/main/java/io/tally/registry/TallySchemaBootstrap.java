package io.tally.registry;

import io.tally.model.TallySchemas;
import io.tally.serde.AvroSerde;
import io.tally.serde.RestSchemaRegistryClient;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.Schema;

/** Registers the value schema of each of Tally's topics (run by ./tally up; idempotent). */
public final class TallySchemaBootstrap {
    private TallySchemaBootstrap() {}

    public static void main(String[] args) {
        String url = args.length > 0 ? args[0] : "http://127.0.0.1:8085";
        RestSchemaRegistryClient client =
                new RestSchemaRegistryClient(url, Duration.ofSeconds(10), System.getenv("TALLY_ADMIN_TOKEN"));
        for (Map.Entry<String, Schema> e : new TreeMap<>(TallySchemas.TOPIC_VALUES).entrySet()) {
            String subject = AvroSerde.valueSubject(e.getKey());
            System.out.println(subject + " -> id " + client.register(subject, e.getValue()));
        }
    }
}
