package io.tally.jobs.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import org.junit.jupiter.api.Test;

/** Which Cassandra refusals mean "the namespace was deleted meanwhile" (dropped), not a failure. */
class AsyncCqlWritesTest {
    @Test
    void aKeyspaceOrTableThatIsGoneIsNamed() {
        assertThat(AsyncCqlWrites.goneKeyspace(
                        new InvalidQueryException(null, "Keyspace 'ns_it_cpc_266eb1_0' doesn't exist")))
                .isEqualTo("ns_it_cpc_266eb1_0");
        assertThat(AsyncCqlWrites.goneKeyspace(new InvalidQueryException(null, "Keyspace ns_x does not exist")))
                .isEqualTo("ns_x");
        // an unlogged batch's refusal (seen in CI: the writer restarted on it)
        assertThat(AsyncCqlWrites.goneKeyspace(
                        new InvalidQueryException(null, "keyspace ns_it_cpc_82b8f5_1 does not exist")))
                .isEqualTo("ns_it_cpc_82b8f5_1");
        assertThat(AsyncCqlWrites.goneKeyspace(new InvalidQueryException(null, "unconfigured table events_20261123")))
                .isNotNull();
    }

    @Test
    void anythingElseIsAFailure() {
        assertThat(AsyncCqlWrites.goneKeyspace(new InvalidQueryException(null, "Invalid STRING constant")))
                .isNull();
        assertThat(AsyncCqlWrites.goneKeyspace(new RuntimeException("Keyspace 'x' doesn't exist")))
                .isNull();
        assertThat(AsyncCqlWrites.goneKeyspace(new WriteTimeoutException(
                        null,
                        com.datastax.oss.driver.api.core.ConsistencyLevel.ONE,
                        0,
                        1,
                        com.datastax.oss.driver.api.core.servererrors.WriteType.SIMPLE)))
                .isNull();
    }
}
