package io.tally.jobs.provision;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.control.ControlPlane;
import io.tally.namespace.NamespaceChange;
import io.tally.namespace.NamespaceConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.ToLongFunction;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.co.CoBroadcastWithNonKeyedOperator;
import org.apache.flink.streaming.util.BroadcastOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The provisioner's pending work across a checkpoint: a delete caught before it ran still runs. */
class NamespaceProvisionerTest {
    /** Stores that fail every call while `down` (Cassandra unreachable), recording what ran. */
    static final class FlakyStorage implements NamespaceStorage {
        static final List<String> CALLS = Collections.synchronizedList(new ArrayList<>());
        /** What each call was told of when its namespace was created (its tables' ids derive from it). */
        static final List<String> CREATED = Collections.synchronizedList(new ArrayList<>());

        static volatile boolean down;

        @Override
        public void provision(NamespaceConfig ns, long createdMicros, long nowMicros) {
            call("provision " + ns.name());
            CREATED.add("provision " + ns.name() + " created " + createdMicros);
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
        public void lifecycle(
                Iterable<NamespaceConfig> namespaces, ToLongFunction<String> createdMicros, long nowMicros) {
            for (NamespaceConfig ns : namespaces) {
                CREATED.add("lifecycle " + ns.name() + " created " + createdMicros.applyAsLong(ns.name()));
            }
        }

        @Override
        public void close() {}
    }

    BroadcastOperatorTestHarness<Long, NamespaceChange, String> h;

    /** A provisioner opened fresh (snapshot null) or restored from a snapshot. */
    BroadcastOperatorTestHarness<Long, NamespaceChange, String> opened(OperatorSubtaskState snapshot) throws Exception {
        var harness = new BroadcastOperatorTestHarness<>(
                new CoBroadcastWithNonKeyedOperator<>(
                        new NamespaceProvisioner(FlakyStorage::new), List.of(ControlPlane.NAMESPACES)),
                1,
                1,
                0);
        harness.setup();
        if (snapshot != null) {
            harness.initializeState(snapshot);
        }
        harness.open();
        return harness;
    }

    @AfterEach
    void close() throws Exception {
        FlakyStorage.down = false;
        FlakyStorage.CALLS.clear();
        FlakyStorage.CREATED.clear();
        if (h != null) {
            h.close();
        }
    }

    @Test
    void aDeletePendingAtACheckpointIsCarriedOutAfterTheRestore() throws Exception {
        h = opened(null);
        FlakyStorage.down = true;
        h.processBroadcastElement(new NamespaceChange("gone", 2, null, true), 1);
        h.processBroadcastElement(NamespaceChange.tick(), 2); // fails: stays pending
        var snapshot = h.snapshot(1, 3);
        h.close();

        FlakyStorage.down = false;
        h = opened(snapshot);
        h.processBroadcastElement(NamespaceChange.tick(), 4);
        assertThat(FlakyStorage.CALLS).containsExactly("retire gone");
        assertThat(h.extractOutputValues()).containsExactly("retired gone v2");
    }

    @Test
    void aRetiredNamespacesTombstoneIsDroppedSoARestoreDoesNotRetireItAgain() throws Exception {
        h = opened(null);
        h.processBroadcastElement(new NamespaceChange("gone", 2, null, true), 1);
        h.processBroadcastElement(NamespaceChange.tick(), 2);
        assertThat(FlakyStorage.CALLS).containsExactly("retire gone");
        var snapshot = h.snapshot(1, 3);
        h.close();

        h = opened(snapshot);
        h.processBroadcastElement(NamespaceChange.tick(), 4);
        assertThat(FlakyStorage.CALLS).containsExactly("retire gone");
    }

    static final String COUNTER_CONFIG = "{\"kind\": \"counter\", \"counter_type\": \"EVENTUAL\"}";

    static NamespaceChange created(NamespaceChange change, long createdMicros) {
        change.createdMicros = createdMicros;
        return change;
    }

    @Test
    void theStoresAreToldWhenTheNamespaceWasCreatedSoATableMadeAgainGetsANewId() throws Exception {
        h = opened(null);
        h.processBroadcastElement(created(NamespaceChange.upsert("again", 1, COUNTER_CONFIG), 111), 1);
        h.processBroadcastElement(NamespaceChange.tick(), 2);
        h.processElement(0L, 3);
        h.processBroadcastElement(created(new NamespaceChange("again", 1, COUNTER_CONFIG, true), 111), 4);
        h.processBroadcastElement(created(NamespaceChange.upsert("again", 1, COUNTER_CONFIG), 222), 5);
        h.processBroadcastElement(NamespaceChange.tick(), 6);
        h.processElement(0L, 7);
        assertThat(FlakyStorage.CREATED)
                .containsExactly(
                        "provision again created 111",
                        "lifecycle again created 111",
                        "provision again created 222",
                        "lifecycle again created 222");
    }

    @Test
    void aNamespaceDeletedAndCreatedAgainInOneTickLosesItsOldDataFirst() throws Exception {
        h = opened(null);
        h.processBroadcastElement(NamespaceChange.upsert("again", 1, COUNTER_CONFIG), 1);
        h.processBroadcastElement(NamespaceChange.tick(), 2);
        h.processBroadcastElement(new NamespaceChange("again", 1, COUNTER_CONFIG, true), 3);
        h.processBroadcastElement(NamespaceChange.upsert("again", 1, COUNTER_CONFIG), 4);
        h.processBroadcastElement(NamespaceChange.tick(), 5);
        assertThat(FlakyStorage.CALLS).containsExactly("provision again", "retire again", "provision again");
    }

    @Test
    void aCreateWaitsForTheFailedDeleteBeforeIt() throws Exception {
        h = opened(null);
        FlakyStorage.down = true;
        h.processBroadcastElement(new NamespaceChange("again", 1, COUNTER_CONFIG, true), 1);
        h.processBroadcastElement(NamespaceChange.upsert("again", 1, COUNTER_CONFIG), 2);
        h.processBroadcastElement(NamespaceChange.tick(), 3);
        assertThat(FlakyStorage.CALLS).isEmpty();
        FlakyStorage.down = false;
        h.processBroadcastElement(NamespaceChange.tick(), 4);
        assertThat(FlakyStorage.CALLS).containsExactly("retire again", "provision again");
    }
}
