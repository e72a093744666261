package io.tally.jobs.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.cassandra.NodeSchemas.Answer;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** When the live nodes' own answers say the cluster agrees, and that a table is gone from it. */
class NodeSchemasTest {
    private static final UUID NOW = UUID.fromString("0b4cca8c-6dbc-344a-8e8c-a419a0c90729");
    private static final UUID BEFORE_THE_KILL = UUID.fromString("487edb61-4ef9-3502-a1b1-465d3c41be59");

    @Test
    void aTableNoNodeHasIsGoneWhenTheyAgree() {
        assertThat(NodeSchemas.gone(List.of(new Answer(NOW, false), new Answer(NOW, false), new Answer(NOW, false)), 3))
                .isTrue();
    }

    @Test
    void aNodeDownMayHoldTheTable() {
        // a table made on a node just before it was killed had not reached the two left
        assertThat(NodeSchemas.gone(List.of(new Answer(NOW, false), new Answer(NOW, false)), 3))
                .isFalse();
    }

    @Test
    void aNodeBehindOnTheSchemaIsNoEvidenceThatATableIsGone() {
        // the restarted node lacks the table the others made while it was down
        assertThat(NodeSchemas.gone(
                        List.of(new Answer(NOW, true), new Answer(BEFORE_THE_KILL, false), new Answer(NOW, true)), 3))
                .isFalse();
        // two nodes on different versions, neither has it: not yet settled
        assertThat(NodeSchemas.gone(List.of(new Answer(NOW, false), new Answer(BEFORE_THE_KILL, false)), 3))
                .isFalse();
    }

    @Test
    void aOneNodeClusterAnswersForItself() {
        assertThat(NodeSchemas.gone(List.of(new Answer(NOW, false)), 1)).isTrue();
        assertThat(NodeSchemas.gone(List.of(), 1)).isFalse();
        assertThat(NodeSchemas.gone(List.of(), 0)).isFalse();
    }

    @Test
    void aTableOneNodeHasIsNotGone() {
        assertThat(NodeSchemas.gone(List.of(new Answer(NOW, false), new Answer(NOW, true)), 2))
                .isFalse();
    }

    @Test
    void agreementIsOneVersionAmongTheAnswers() {
        assertThat(NodeSchemas.agree(List.of(new Answer(NOW, false), new Answer(NOW, true))))
                .isTrue();
        assertThat(NodeSchemas.agree(List.of(new Answer(NOW, false), new Answer(BEFORE_THE_KILL, false))))
                .isFalse();
        assertThat(NodeSchemas.agree(List.of())).isFalse();
    }
}
