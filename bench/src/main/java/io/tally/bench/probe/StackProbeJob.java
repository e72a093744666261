package io.tally.bench.probe;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;

/**
 * A bounded job that proves a Flink cluster really runs user code: it sums the squares of
 * 1..n across a keyed shuffle and publishes the sum as the accumulator {@code sumOfSquares},
 * which a caller reads back through the REST API ({@code /jobs/<id>/accumulators}).
 */
public final class StackProbeJob {
    public static final String ACCUMULATOR = "sumOfSquares";

    private StackProbeJob() {}

    public static void main(String[] args) throws Exception {
        long n = ParameterTool.fromArgs(args).getLong("n", 1000L);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        JobExecutionResult result = run(env, n);
        // Submitted detached (REST /jars/run), the result is only known later through the REST API.
        if (result.isJobExecutionResult()) {
            System.out.println(ACCUMULATOR + "=" + result.getAccumulatorResult(ACCUMULATOR));
        }
    }

    static JobExecutionResult run(StreamExecutionEnvironment env, long n) throws Exception {
        build(env, n);
        return env.execute("tally-stack-probe");
    }

    static void build(StreamExecutionEnvironment env, long n) {
        DataStream<Long> squares = env.fromSequence(1, n).keyBy(x -> x % 4).map(new SquareAndCount());
        squares.addSink(new DiscardingSink<>());
    }

    /** Squares each value and adds it to the job-wide accumulator. */
    static final class SquareAndCount extends RichMapFunction<Long, Long> {
        private final LongCounter sum = new LongCounter();

        @Override
        public void open(Configuration parameters) {
            getRuntimeContext().addAccumulator(ACCUMULATOR, sum);
        }

        @Override
        public Long map(Long x) {
            long sq = x * x;
            sum.add(sq);
            return sq;
        }
    }

    /** n(n+1)(2n+1)/6: what the accumulator must hold after a run. */
    public static long expectedSum(long n) {
        return n * (n + 1) * (2 * n + 1) / 6;
    }
}
