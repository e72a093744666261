package io.tally.jobs.timeseries;

import com.datastax.oss.driver.api.core.CqlSession;
import io.tally.namespace.NamespaceCatalog;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs one {@link SliceLifecycle} pass per tick (parallelism 1); a failed pass is logged and retried next tick. */
public class SliceLifecycleFunction extends ProcessFunction<Long, String> {
    private static final Logger LOG = LoggerFactory.getLogger(SliceLifecycleFunction.class);
    private final String cassandraHost;
    private final int cassandraPort;
    private final String elasticsearch;
    private final String namespacesDir;
    private transient SliceLifecycle lifecycle;
    private transient NamespaceCatalog catalog;

    public SliceLifecycleFunction(String cassandraHost, int cassandraPort, String elasticsearch, String namespacesDir) {
        this.cassandraHost = cassandraHost;
        this.cassandraPort = cassandraPort;
        this.elasticsearch = elasticsearch;
        this.namespacesDir = namespacesDir;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
        catalog = NamespaceCatalog.fromDirectory(Path.of(namespacesDir));
        lifecycle = new SliceLifecycle(io.tally.jobs.cassandra.AsyncCqlWrites.session(cassandraHost, cassandraPort), elasticsearch);
    }

    @Override
    public void processElement(Long tick, Context ctx, Collector<String> out) {
        try {
            lifecycle.run(catalog, System.currentTimeMillis() * 1000);
        } catch (Exception e) {
            LOG.warn("slice lifecycle pass failed; retrying on the next tick", e);
        }
    }

    @Override
    public void close() {
        if (lifecycle != null) {
            lifecycle.close();
        }
    }
}
