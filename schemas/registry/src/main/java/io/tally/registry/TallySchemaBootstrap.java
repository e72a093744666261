package io.tally.registry;

import io.tally.model.TallySchemas;
import io.tally.serde.AvroSerde;
import io.tally.serde.RegistryException;
import io.tally.serde.RestSchemaRegistryClient;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.Schema;

/**
 * Registers the value schema of each of Tally's topics (run by ./tally up and ./tally deploy;
 * idempotent). With {@code --check} it registers nothing and says, per subject, whether the
 * schema is registered (a lookup, which needs no admin token).
 */
public final class TallySchemaBootstrap {
    private TallySchemaBootstrap() {}

    public static void main(String[] args) {
        String url = args.length > 0 ? args[0] : "http://127.0.0.1:8085";
        boolean check = args.length > 1 && args[1].equals("--check");
        RestSchemaRegistryClient client =
                new RestSchemaRegistryClient(url, Duration.ofSeconds(10), System.getenv("TALLY_ADMIN_TOKEN"));
        for (Map.Entry<String, Schema> e : new TreeMap<>(TallySchemas.TOPIC_VALUES).entrySet()) {
            String subject = AvroSerde.valueSubject(e.getKey());
            if (!check) {
                System.out.println(subject + " -> id " + client.register(subject, e.getValue()));
                continue;
            }
            try {
                System.out.println(subject + " is registered as id " + client.lookup(subject, e.getValue()));
            } catch (RegistryException notThere) {
                if (notThere.status() != 404) {
                    throw notThere;
                }
                System.out.println(subject + " is not registered (this release's schema)");
            }
        }
    }
}
