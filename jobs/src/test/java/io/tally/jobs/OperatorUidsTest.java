package io.tally.jobs;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.counter.CounterRollupJob;
import io.tally.jobs.counter.Heartbeats;
import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.sched.NoisyNeighborJob;
import io.tally.jobs.sched.NoisyNeighborRule;
import io.tally.jobs.testing.CollectSink;
import io.tally.jobs.testing.RecordingStorage;
import io.tally.jobs.testing.StaticRegistry;
import io.tally.jobs.timeseries.TimeSeriesWriterJob;
import io.tally.namespace.NamespaceChange;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.junit.jupiter.api.Test;

/**
 * Every operator of every job has a fixed uid: a savepoint maps its state to operators by uid,
 * so an operator without one could not be matched after a change of the graph around it (a
 * rescale, an upgrade that adds an operator).
 */
class OperatorUidsTest {
    private final StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2);

    private DataStream<RawRecord> records() {
        return env.fromData(TypeInformation.of(RawRecord.class), new RawRecord("t", 0, 0, 0, null, new byte[0]))
                .uid("test-records");
    }

    private DataStream<NamespaceChange> control() {
        return env.fromData(TypeInformation.of(NamespaceChange.class), NamespaceChange.tick())
                .uid("test-control");
    }

    private List<String> withoutUid() {
        return env.getStreamGraph(false).getStreamNodes().stream()
                .filter(n -> n.getTransformationUID() == null)
                .map(StreamNode::getOperatorName)
                .toList();
    }

    @Test
    void theCounterRollupJob() {
        CounterRollupJob.build(
                records(),
                control(),
                new CollectSink<>("u-log"),
                new CollectSink<>("u-rollups"),
                new CollectSink<>("u-view"),
                new CollectSink<>("u-dead"),
                StaticRegistry::new,
                0,
                new Heartbeats.Branch(new CollectSink<>("u-heartbeats"), 3, 100, 1),
                CounterRollupJob.IdleCounterPolicy.KEEP);
        assertThat(withoutUid()).isEmpty();
    }

    @Test
    void theTimeSeriesWriterJob() {
        TimeSeriesWriterJob.build(
                records(),
                new CollectSink<>("u-rows"),
                new CollectSink<>("u-docs"),
                new CollectSink<>("u-dead"),
                control(),
                StaticRegistry::new,
                0,
                null,
                RecordingStorage.branch("u-writer"));
        assertThat(withoutUid()).isEmpty();
    }

    @Test
    void theNoisyNeighborJob() {
        NoisyNeighborJob.build(
                records(),
                new CollectSink<>("u-alerts"),
                new CollectSink<>("u-events"),
                StaticRegistry::new,
                Duration.ofSeconds(10),
                Duration.ofSeconds(5),
                NoisyNeighborRule.defaults(),
                io.tally.jobs.sched.AlertHoldDown.NONE,
                Duration.ofHours(1));
        assertThat(withoutUid()).isEmpty();
    }
}
