package io.tally.model.cassandra;

import java.io.Serializable;
import java.util.regex.Pattern;

/**
 * How Tally's keyspaces are replicated: {@code SimpleStrategy} with a factor (one node, the
 * default: factor 1), or {@code NetworkTopologyStrategy} with a factor in the local datacenter
 * (a real cluster: e.g. 3, read and written at LOCAL_QUORUM). A deployment setting, not user
 * input, but it is written into DDL, so it is checked like a name.
 */
public record KeyspaceReplication(String strategy, int factor, String datacenter) implements Serializable {
    public static final String SIMPLE = "SimpleStrategy";
    public static final String NETWORK_TOPOLOGY = "NetworkTopologyStrategy";
    private static final Pattern DATACENTER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
    /** One node: what the local stack and the tests run (declared after the pattern it is checked with). */
    public static final KeyspaceReplication ONE_NODE = new KeyspaceReplication(SIMPLE, 1, "datacenter1");

    public KeyspaceReplication {
        if (!SIMPLE.equals(strategy) && !NETWORK_TOPOLOGY.equals(strategy)) {
            throw new IllegalArgumentException(
                    "replication strategy '" + strategy + "': " + SIMPLE + " or " + NETWORK_TOPOLOGY);
        }
        if (factor < 1 || factor > 9) {
            throw new IllegalArgumentException("replication factor " + factor + ": 1 to 9");
        }
        if (datacenter == null || !DATACENTER.matcher(datacenter).matches()) {
            throw new IllegalArgumentException("datacenter '" + datacenter + "' is not a safe datacenter name");
        }
    }

    /** The map of a {@code WITH replication = ...} clause. */
    public String cql() {
        return SIMPLE.equals(strategy)
                ? "{'class': 'SimpleStrategy', 'replication_factor': " + factor + "}"
                : "{'class': 'NetworkTopologyStrategy', '" + datacenter + "': " + factor + "}";
    }
}
