package io.tally.model.elasticsearch;

import java.util.Set;

/**
 * The fields every Tally document has besides a namespace's field_mapping (docs/design.md,
 * "Search"). A field_mapping may not name them: the indexer would overwrite the event's own
 * values, and the search API sorts and pages on them.
 */
public final class DocumentFields {
    public static final String TIME_SERIES_ID = "time_series_id";
    /** Milliseconds since the epoch, for date queries. */
    public static final String EVENT_TIME = "event_time";
    /** Microseconds since the epoch: the sort key and page cursor. */
    public static final String EVENT_TIME_US = "event_time_us";

    public static final String EVENT_ID = "event_id";

    /** Names a field_mapping may not use. */
    public static final Set<String> RESERVED = Set.of(TIME_SERIES_ID, EVENT_TIME, EVENT_TIME_US, EVENT_ID);

    private DocumentFields() {}
}
