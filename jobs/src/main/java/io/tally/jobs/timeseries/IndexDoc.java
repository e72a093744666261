package io.tally.jobs.timeseries;

import java.util.HashMap;
import java.util.Map;

/** One event as an Elasticsearch document of its slice's index; the id is its idempotency key. */
public class IndexDoc {
    public String index;
    public String id;
    public Map<String, Object> source = new HashMap<>();

    public IndexDoc() {}
}
