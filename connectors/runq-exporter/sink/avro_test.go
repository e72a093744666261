package sink

import (
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// The Avro schemas of the repo, parsed the way the registry serves them (named types inline).
func schema(t *testing.T, files ...string) avro.Schema {
	t.Helper()
	var s avro.Schema
	cache := &avro.SchemaCache{}
	for _, f := range files {
		b, err := os.ReadFile("../../../schemas/avro/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = avro.ParseWithCache(string(b), "", cache); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestEncodeTimeSeriesEventInConfluentWireFormat(t *testing.T) {
	enc := &Encoder{ID: 7, Schema: schema(t, "EventItem.avsc", "TimeSeriesEvent.avsc")}
	at := time.UnixMicro(1_795_000_000_123_456).UTC()
	in := TimeSeriesEvent{Namespace: "sched.runq", TimeSeriesID: "h/web", EventTime: at, EventID: "h/1/2",
		Items: []EventItem{{Key: "runq_latency_ns", Value: []byte("1500")}}, Source: "runq-exporter"}
	b, err := enc.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0 || binary.BigEndian.Uint32(b[1:5]) != 7 {
		t.Fatalf("header % x", b[:5])
	}
	var out TimeSeriesEvent
	if err := avro.Unmarshal(enc.Schema, b[5:], &out); err != nil {
		t.Fatal(err)
	}
	if !out.EventTime.Equal(at) || out.Items[0].Key != "runq_latency_ns" || string(out.Items[0].Value) != "1500" {
		t.Fatalf("round trip: %+v", out)
	}
}

func TestEncodeCounterEvent(t *testing.T) {
	enc := &Encoder{ID: 3, Schema: schema(t, "CounterEvent.avsc")}
	b, err := enc.Encode(CounterEvent{Namespace: "sched.switchout", Counter: "h/web/system", Op: "ADD", Delta: 42,
		EventTime: time.UnixMicro(5).UTC(), EventID: "x", Source: "runq-exporter"})
	if err != nil {
		t.Fatal(err)
	}
	var out CounterEvent
	if err := avro.Unmarshal(enc.Schema, b[5:], &out); err != nil || out.Delta != 42 || out.Op != "ADD" {
		t.Fatalf("%+v %v", out, err)
	}
}
