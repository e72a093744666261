package io.tally.jobs.sched;

import java.util.Map;
import java.util.TreeMap;

/** A TimeSeriesEvent the job writes back (a summary or an alert), as a POJO until the serializer encodes it. */
public class SchedEvent {
    public String namespace;
    public String timeSeriesId;
    public long eventTimeMicros;
    public String eventId;
    public Map<String, String> items = new TreeMap<>();

    public SchedEvent() {}
}
