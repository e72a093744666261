package io.tally.jobs.sched;

/**
 * One scheduler observation of a container, from the exporter's events: a run-queue
 * latency sample (sched.runq) or a switch-out delta by cause (sched.switchout).
 */
public class SchedObservation {
    public String host;
    public String container;
    public boolean switchOut;
    public long latencyUs;
    /**
     * Of a switch-out: the cause its taker makes. Of a latency sample: the cause the task whose
     * place the waiter took makes (who held the CPU when its wait ended; null when the source
     * cannot tell, as procfs).
     */
    public String cause;

    public long count;
    public long timeMillis;

    public SchedObservation() {}

    public String key() {
        return host + "/" + container;
    }

    static SchedObservation latency(String host, String container, long latencyUs, String cause, long timeMillis) {
        SchedObservation o = new SchedObservation();
        o.host = host;
        o.container = container;
        o.latencyUs = latencyUs;
        o.cause = cause;
        o.timeMillis = timeMillis;
        return o;
    }

    static SchedObservation switchOuts(String host, String container, String cause, long count, long timeMillis) {
        SchedObservation o = new SchedObservation();
        o.host = host;
        o.container = container;
        o.switchOut = true;
        o.cause = cause;
        o.count = count;
        o.timeMillis = timeMillis;
        return o;
    }
}
