package io.tally.gateway;

import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;

/** Whether Kafka answers: a cluster description every second, with a short timeout. */
final class KafkaHealth implements AutoCloseable {
    private final Admin admin;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kafka-health");
        t.setDaemon(true);
        return t;
    });
    private final java.util.function.BooleanSupplier producerReady;
    private volatile boolean up;
    private volatile String detail = "not checked yet";

    /** @param producerReady whether the producer can send now (has metadata); checked after the cluster answers */
    KafkaHealth(Properties kafka, java.util.function.BooleanSupplier producerReady) {
        this.producerReady = producerReady;
        Properties p = kafka;
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 1500);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 1500);
        this.admin = Admin.create(p);
    }

    void start() {
        check();
        timer.scheduleWithFixedDelay(this::check, 1, 1, TimeUnit.SECONDS);
    }

    private void check() {
        try {
            int brokers = admin.describeCluster(new DescribeClusterOptions().timeoutMs(1500))
                    .nodes()
                    .get(2, TimeUnit.SECONDS)
                    .size();
            boolean producer = brokers > 0 && producerReady.getAsBoolean();
            up = brokers > 0 && producer;
            detail = brokers + " broker(s)" + (producer ? "" : ", producer has no metadata yet");
        } catch (Exception e) {
            up = false;
            detail = "unreachable: " + e.getClass().getSimpleName();
        }
    }

    boolean up() {
        return up;
    }

    String detail() {
        return detail;
    }

    @Override
    public void close() {
        timer.shutdownNow();
        admin.close();
    }
}
