package io.tally.registry;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Starts a registry instance: replay _schemas, then serve the REST API. */
public final class RegistryMain {
    private static final Logger LOG = LoggerFactory.getLogger(RegistryMain.class);

    private RegistryMain() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.out.println("tally-registry: a Confluent-compatible schema registry stored in Kafka\n"
                    + RegistryConfig.usage());
            return;
        }
        RegistryConfig config = RegistryConfig.from(System.getenv(), args);
        RegistryState state = new RegistryState(config.defaultCompatibility());
        LOG.info("Kafka at {}: {}", config.get(RegistryConfig.BOOTSTRAP), config.kafkaSecurity());
        KafkaLog log = new KafkaLog(config.kafkaClient(), config.get(RegistryConfig.TOPIC), state, config.timeoutMs());
        log.start();
        RegistryService service = new RegistryService(state, log, config.defaultCompatibility());
        RegistryHttpApi api =
                new RegistryHttpApi(service, new RegistryMetrics(state), log::healthy, config.adminToken());
        Vertx vertx = Vertx.vertx();
        HttpServer server =
                RegistryHttpApi.listen(vertx, api.router(vertx, config.maxBodyBytes()), config.host(), config.port());
        LOG.info(
                "schema registry listening on http://{}:{} (topic {})",
                config.host(),
                server.actualPort(),
                config.get(RegistryConfig.TOPIC));
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            LOG.info("shutting down");
                            server.close();
                            vertx.close();
                            log.close();
                        },
                        "shutdown"));
    }
}
