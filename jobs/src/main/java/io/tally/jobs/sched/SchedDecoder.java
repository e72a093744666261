package io.tally.jobs.sched;

import io.tally.jobs.kafka.RawRecord;
import io.tally.model.Bytes;
import io.tally.model.Topics;
import io.tally.serde.AvroSerde;
import io.tally.serde.RegistryUnavailableException;
import io.tally.serde.SchemaRegistryClient;
import io.tally.serde.SerdeException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.function.SerializableSupplier;
import tally.v1.CounterEvent;
import tally.v1.CounterOp;
import tally.v1.EventItem;
import tally.v1.TimeSeriesEvent;

/**
 * Picks the exporter's events out of the shared topics: TimeSeriesEvents of sched.runq
 * (time_series_id host/container, items runq_lat_us and, when the source can tell, cause) and
 * CounterEvents of sched.switchout (counter host/container/cause). Everything else, and what
 * does not decode, is not this job's to judge: the writer and the rollup job dead-letter bad
 * records.
 */
public class SchedDecoder extends ProcessFunction<RawRecord, SchedObservation> {
    public static final String RUNQ = Topics.SCHED_RUNQ;
    public static final String SWITCH_OUT = Topics.SCHED_SWITCH_OUT;
    private final SerializableSupplier<SchemaRegistryClient> registry;
    private transient AvroSerde serde;

    public SchedDecoder(SerializableSupplier<SchemaRegistryClient> registry) {
        this.registry = registry;
    }

    @Override
    public void open(OpenContext ctx) {
        serde = new AvroSerde(registry.get(), false);
    }

    @Override
    public void processElement(RawRecord in, Context ctx, Collector<SchedObservation> out) {
        if (in.value == null || in.key == null) {
            return; // heartbeats
        }
        String key = new String(in.key, StandardCharsets.UTF_8);
        boolean runq = key.startsWith(RUNQ + "/");
        if (!runq && !key.startsWith(SWITCH_OUT + "/")) {
            return; // cheap: most records are not scheduler data
        }
        try {
            if (runq) {
                TimeSeriesEvent e = serde.deserialize(in.value, TimeSeriesEvent.class);
                String tsid = e.getTimeSeriesId();
                int slash = tsid.indexOf('/');
                String latency = null;
                String cause = null;
                for (EventItem item : e.getItems()) {
                    switch (item.getKey()) {
                        case "runq_lat_us" -> latency = Bytes.utf8(item.getValue());
                        case "cause" -> cause = Bytes.utf8(item.getValue());
                        default -> {}
                    }
                }
                if (latency != null && slash > 0) {
                    out.collect(SchedObservation.latency(
                            tsid.substring(0, slash),
                            tsid.substring(slash + 1),
                            Long.parseLong(latency),
                            cause,
                            e.getEventTime().toEpochMilli()));
                }
            } else {
                CounterEvent e = serde.deserialize(in.value, CounterEvent.class);
                String counter = e.getCounter();
                int first = counter.indexOf('/');
                int last = counter.lastIndexOf('/');
                if (first > 0 && last > first && e.getOp() == CounterOp.ADD) {
                    out.collect(SchedObservation.switchOuts(
                            counter.substring(0, first),
                            counter.substring(first + 1, last),
                            counter.substring(last + 1),
                            e.getDelta(),
                            e.getEventTime().toEpochMilli()));
                }
            }
        } catch (RegistryUnavailableException e) {
            throw e; // retried after the restart, not dead-lettered
        } catch (SerdeException | NumberFormatException | ClassCastException e) {
            // not decodable as scheduler data: the writer or the rollup job dead-letters it
        }
    }
}
