package io.tally.jobs.provision;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.control.ControlPlane;
import io.tally.namespace.NamespaceChange;
import io.tally.namespace.NamespaceConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.streaming.api.operators.co.CoBroadcastWithNonKeyedOperator;
import org.apache.flink.streaming.util.BroadcastOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The provisioner's pending work across a checkpoint: a delete caught before it ran still runs. */
class NamespaceProvisionerTest {
    /** Stores that fail every call while `down` (Cassandra unreachable), recording what ran. */
    static final class FlakyStorage implements NamespaceStorage {
        static final List<String> CALLS = Collections.synchronizedList(new ArrayList<>());
        static volatile boolean down;

        @Override
        public void provision(NamespaceConfig ns, long nowMicros) {
            call("provision " + ns.name());
        }

        @Override
        public void retire(String namespace) {
            call("retire " + namespace);
        }

        private static void call(String what) {
            if (down) {
                throw new IllegalStateException("Cassandra is unreachable");
            }
            CALLS.add(what);
        }

        @Override
        public void lifecycle(Iterable<NamespaceConfig> namespaces, long nowMicros) {}

        @Override
        public void close() {}
    }

    BroadcastOperatorTestHarness<Long, NamespaceChange, String> h;

    BroadcastOperatorTestHarness<Long, NamespaceChange, String> harness() throws Exception {
        return new BroadcastOperatorTestHarness<>(
                new CoBroadcastWithNonKeyedOperator<>(
                        new NamespaceProvisioner(FlakyStorage::new), List.of(ControlPlane.NAMESPACES)),
                1,
                1,
                0);
    }

    @AfterEach
    void close() throws Exception {
        FlakyStorage.down = false;
        FlakyStorage.CALLS.clear();
        if (h != null) {
            h.close();
        }
    }

    @Test
    void aDeletePendingAtACheckpointIsCarriedOutAfterTheRestore() throws Exception {
        h = harness();
        h.setup();
        h.open();
        FlakyStorage.down = true;
        h.processBroadcastElement(new NamespaceChange("gone", 2, null, true), 1);
        h.processBroadcastElement(NamespaceChange.tick(), 2); // fails: stays pending
        var snapshot = h.snapshot(1, 3);
        h.close();

        FlakyStorage.down = false;
        h = harness();
        h.setup();
        h.initializeState(snapshot);
        h.open();
        h.processBroadcastElement(NamespaceChange.tick(), 4);
        assertThat(FlakyStorage.CALLS).containsExactly("retire gone");
        assertThat(h.extractOutputValues()).containsExactly("retired gone v2");
    }

    @Test
    void aRetiredNamespacesTombstoneIsDroppedSoARestoreDoesNotRetireItAgain() throws Exception {
        h = harness();
        h.setup();
        h.open();
        h.processBroadcastElement(new NamespaceChange("gone", 2, null, true), 1);
        h.processBroadcastElement(NamespaceChange.tick(), 2);
        assertThat(FlakyStorage.CALLS).containsExactly("retire gone");
        var snapshot = h.snapshot(1, 3);
        h.close();

        h = harness();
        h.setup();
        h.initializeState(snapshot);
        h.open();
        h.processBroadcastElement(NamespaceChange.tick(), 4);
        assertThat(FlakyStorage.CALLS).containsExactly("retire gone");
    }
}
