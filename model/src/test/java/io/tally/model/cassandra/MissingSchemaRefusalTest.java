package io.tally.model.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Each wording of Cassandra's "no such keyspace or table" seen from the driver, and near misses. */
class MissingSchemaRefusalTest {
    @Test
    void aKeyspaceRefusalNamesItsKeyspace() {
        assertThat(MissingSchemaRefusal.keyspaceOf("Keyspace 'ns_it_cpc_266eb1_0' doesn't exist"))
                .isEqualTo("ns_it_cpc_266eb1_0");
        assertThat(MissingSchemaRefusal.keyspaceOf("Keyspace ns_x does not exist"))
                .isEqualTo("ns_x");
        // an unlogged batch's refusal (seen in CI: the writer restarted on it)
        assertThat(MissingSchemaRefusal.keyspaceOf("keyspace ns_it_cpc_82b8f5_1 does not exist"))
                .isEqualTo("ns_it_cpc_82b8f5_1");
    }

    @Test
    void aTableRefusalIsMissingWithoutAKeyspace() {
        for (String message : new String[] {
            "unconfigured table events_20261123",
            "table ns_a.events_20261207 does not exist",
            "Table 'ns_a.events_20261207' doesn't exist"
        }) {
            assertThat(MissingSchemaRefusal.saysMissing(message)).as(message).isTrue();
            assertThat(MissingSchemaRefusal.keyspaceOf(message))
                    .as(message)
                    .isEqualTo(MissingSchemaRefusal.UNNAMED_KEYSPACE);
        }
    }

    @Test
    void anythingElseIsNotMissingSchema() {
        for (String message : new String[] {
            "Invalid STRING constant (x) for \"time_bucket\" of type int",
            "Undefined column name evnt_time in table ns_a.events_20261207",
            "Cannot achieve consistency level LOCAL_QUORUM",
            "namespace 'x' does not exist",
            ""
        }) {
            assertThat(MissingSchemaRefusal.saysMissing(message)).as(message).isFalse();
            assertThat(MissingSchemaRefusal.keyspaceOf(message)).as(message).isNull();
        }
        assertThat(MissingSchemaRefusal.saysMissing(null)).isFalse();
        assertThat(MissingSchemaRefusal.keyspaceOf(null)).isNull();
    }
}
