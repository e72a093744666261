// Package contract holds the names the exporter shares with the rest of Tally: the topics it
// writes to and the namespaces of scheduler data. They are owned by Tally's model module
// (model/topics.json, written from io.tally.model.Topics); contract_test.go checks them against it.
package contract

const (
	// TimeSeriesEventsTopic takes run-queue samples as TimeSeriesEvents.
	TimeSeriesEventsTopic = "tally.timeseries.events"
	// CounterEventsTopic takes switch-outs as CounterEvent deltas.
	CounterEventsTopic = "tally.counter.events"

	// RunqNamespace is the namespace of run-queue samples (time_series_id host/container).
	RunqNamespace = "sched.runq"
	// SwitchOutNamespace is the namespace of switch-out counters (host/container/cause).
	SwitchOutNamespace = "sched.switchout"
)
