package io.tally.jobs.sched;

/** A NoisyNeighborAlert on its way to tally.alerts (and to sched.alerts, queryable). */
public class AlertRecord {
    public ContainerWindow window;
    public String state;
    public long baselineP99Us;
    public String reason;

    public AlertRecord() {}

    static AlertRecord of(ContainerWindow w, String state, double baselineP99Us, String reason) {
        AlertRecord a = new AlertRecord();
        a.window = w;
        a.state = state;
        a.baselineP99Us = Math.round(baselineP99Us);
        a.reason = reason;
        return a;
    }
}
