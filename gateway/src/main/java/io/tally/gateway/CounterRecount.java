package io.tally.gateway;

import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tally.gateway.service.NamespaceResolver;
import io.tally.gateway.service.ServiceException;
import io.tally.gateway.service.ServiceException.Kind;
import io.tally.model.cassandra.CounterRollupsTable;
import io.tally.namespace.CounterFold;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * POST /v1/counter/Recount: an operator's check of a counter against its event log, and its
 * repair. Apart from {@link CounterReader} so that the read path never writes.
 */
final class CounterRecount {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final NamespaceResolver namespaces;
    private final CounterReader counters;
    private final EventReader events;
    private final CassandraSession cassandra;
    private final int maxIdLength;
    private final Map<String, PreparedStatement> repairs = new ConcurrentHashMap<>();

    CounterRecount(
            NamespaceResolver namespaces,
            CounterReader counters,
            EventReader events,
            CassandraSession cassandra,
            GatewayConfig config) {
        this.namespaces = namespaces;
        this.counters = counters;
        this.events = events;
        this.cassandra = cassandra;
        this.maxIdLength = config.intOf(GatewayConfig.MAX_ID);
    }

    /**
     * Recount: folds the event log from `from` (default: the retention) up to the rollup time
     * (or `to`) and compares the result with the stored rollup when it ends at the rollup time; with repair, writes the recounted value at the same rollup time,
     * one microsecond of write time above the stored one so it wins, and a newer rollup still
     * wins over it. Only durable types have an event log.
     */
    ObjectNode recount(JsonNode body) {
        RequestJson.object(body, "body");
        NamespaceConfig ns = RequestJson.namespace(body, namespaces, NamespaceConfig.Kind.COUNTER, maxIdLength);
        if (!ns.counterType().durable()) {
            throw ServiceException.invalid(
                    "NO_EVENT_LOG", "BEST_EFFORT counters keep no event log to recount from", "namespace");
        }
        String counter = RequestJson.text(body, "counter_name", "counter_name", maxIdLength);
        boolean repair = body.path("repair").asBoolean(false);
        CounterReader.Rollup r = counters.rollup(ns, counter);
        if (r.rollupMicros() == 0) {
            throw new ServiceException(
                    Kind.NOT_FOUND, "NO_ROLLUP", "counter '" + counter + "' has no rollup yet", "counter_name");
        }
        long now = System.currentTimeMillis() * 1000;
        long from = body.hasNonNull("from")
                ? RequestJson.instantMicros(body, "from", "from")
                : now - ns.retention().deleteAfter().toNanos() / 1000;
        long to = body.hasNonNull("to") ? RequestJson.instantMicros(body, "to", "to") : r.rollupMicros();
        if (from >= to) {
            throw ServiceException.invalid(
                    "INVALID_FIELD",
                    "from must be before " + (body.hasNonNull("to") ? "to" : "the rollup time"),
                    "from");
        }
        boolean comparable = to == r.rollupMicros(); // a rollup is a count at its own time only
        List<CounterFold.Mutation> log = new ArrayList<>();
        long eventCount = 0;
        for (EventReader.Event e : events.scan(ns, counter, from, to)) {
            eventCount++;
            for (Map.Entry<String, byte[]> item : e.items()) {
                CounterFold.Mutation m = CounterFold.fromItem(e.timeMicros(), item.getKey(), item.getValue());
                if (m != null) {
                    log.add(m);
                }
            }
        }
        long recounted = CounterFold.fold(0, log);
        ObjectNode reply = JSON.createObjectNode()
                .put("counter_name", counter)
                .put("from", Instant.EPOCH.plusNanos(from * 1000).toString())
                .put("to", Instant.EPOCH.plusNanos(to * 1000).toString())
                .put(
                        "last_rollup_ts",
                        Instant.EPOCH.plusNanos(r.rollupMicros() * 1000).toString())
                .put("events", eventCount)
                .put("rollup_count", r.count())
                .put("recounted", recounted)
                .put("compared", comparable)
                .put("repaired", false);
        if (comparable) {
            reply.put("difference", recounted - r.count());
        } else {
            reply.putNull("difference");
        }
        if (repair && !comparable) {
            throw ServiceException.invalid(
                    "INVALID_FIELD", "repair compares with the rollup, so it needs to = last_rollup_ts", "to");
        }
        if (repair && recounted != r.count()) {
            String keyspace = NamespaceName.keyspace(ns.name());
            PreparedStatement ps = repairs.computeIfAbsent(
                    keyspace, k -> cassandra.get().prepare(CounterRollupsTable.insertRollup(k)));
            BoundStatement write =
                    ps.bind(counter, recounted, Instant.EPOCH.plusNanos(to * 1000), Math.max(r.writeTime(), to) + 1);
            cassandra.get().execute(write);
            reply.put("repaired", true);
        }
        return reply;
    }
}
