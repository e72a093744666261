package io.tally.model;

/**
 * Why an event went to tally.deadletter (the DeadLetter record's {@code reason}): stable codes
 * that operators alert and filter on. Every stage that dead-letters picks one of these.
 */
public enum DeadLetterReason {
    /** Not Confluent wire format, an unknown schema id, or bytes that do not decode. */
    UNDECODABLE,
    /** No such namespace (after the grace for one created a moment ago), or it was deleted. */
    UNKNOWN_NAMESPACE,
    /** A counter event in a timeseries namespace or the other way round. */
    WRONG_NAMESPACE_KIND,
    /** event_time outside {@link AcceptWindow} around the record's Kafka timestamp. */
    OUTSIDE_ACCEPT_WINDOW,
    /** The slice the event belongs to is closed (retention.close_after has passed). */
    SLICE_CLOSED,
    /** An idempotency key seen before with another payload. */
    IDEMPOTENCY_KEY_REUSE,
    /**
     * Elasticsearch refuses (or would refuse) the event's document for what it is: a value not of
     * its field's mapped type, say. The event is stored in Cassandra; the message says what was
     * left out of the index.
     */
    INDEX_REJECTED,
    /** Cassandra refuses the event's rows for what they are (not for being down). */
    ROW_REJECTED,
    /**
     * A RECOUNT whose rollup time the rollup job no longer holds (it keeps its last rollups only),
     * or that a BEST_EFFORT counter cannot take: nothing was changed; recount again.
     */
    RECOUNT_STALE
}
