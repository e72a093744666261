package io.tally.jobs.kafka;

import io.tally.model.DeadLetterReason;

/** An event the job could not process, with a stable reason code (goes to tally.deadletter). */
public class DeadLetterRecord {
    public RawRecord original;
    public DeadLetterReason reason;
    public String message;
    public String stage;

    public DeadLetterRecord() {}

    public DeadLetterRecord(RawRecord original, DeadLetterReason reason, String message, String stage) {
        this.original = original;
        this.reason = reason;
        this.message = message;
        this.stage = stage;
    }
}
