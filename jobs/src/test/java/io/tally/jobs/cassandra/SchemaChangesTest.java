package io.tally.jobs.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class SchemaChangesTest {
    record Peer(String name, UUID hostId, boolean up) {}

    private static final UUID LOW = UUID.fromString("00000000-0000-0000-0000-000000000001");
    private static final UUID MID = UUID.fromString("00000000-0000-0000-0000-000000000002");
    private static final UUID HIGH = UUID.fromString("00000000-0000-0000-0000-000000000003");

    private static String coordinatorOf(List<Peer> peers) {
        return SchemaChanges.coordinator(peers, Peer::up, Peer::hostId)
                .map(Peer::name)
                .orElse(null);
    }

    @Test
    void everyJobPicksTheLiveNodeWithTheLowestHostIdWhateverOrderItSeesTheNodesIn() {
        var a = new Peer("a", MID, true);
        var b = new Peer("b", LOW, true);
        var c = new Peer("c", HIGH, true);
        assertThat(coordinatorOf(List.of(a, b, c))).isEqualTo("b");
        assertThat(coordinatorOf(List.of(c, a, b))).isEqualTo("b");
    }

    @Test
    void aNodeDownIsPassedOver() {
        assertThat(coordinatorOf(
                        List.of(new Peer("a", LOW, false), new Peer("b", HIGH, true), new Peer("c", MID, true))))
                .isEqualTo("c");
    }

    @Test
    void noLiveNodeWithAHostIdLeavesTheChoiceToTheDriver() {
        assertThat(coordinatorOf(List.of(new Peer("a", LOW, false), new Peer("b", null, true))))
                .isNull();
    }
}
