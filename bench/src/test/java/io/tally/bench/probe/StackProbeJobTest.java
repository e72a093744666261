package io.tally.bench.probe;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;

class StackProbeJobTest {
    @Test
    void sumsSquaresOnAMiniCluster() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2);
        JobExecutionResult result = StackProbeJob.run(env, 500);
        assertThat((Long) result.getAccumulatorResult(StackProbeJob.ACCUMULATOR))
                .isEqualTo(StackProbeJob.expectedSum(500));
    }

    @Test
    void closedFormMatchesSmallCases() {
        assertThat(StackProbeJob.expectedSum(1)).isEqualTo(1);
        assertThat(StackProbeJob.expectedSum(3)).isEqualTo(14);
    }
}
