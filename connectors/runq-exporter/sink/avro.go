// Package sink turns samples into Tally's Avro events (Confluent wire format, schemas from
// the registry) and produces them to the same topics as every other producer.
package sink

import (
	"context"
	"fmt"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// Encoder writes one topic's values in the Confluent wire format (sr.ConfluentHeader: magic
// byte 0, the 4-byte schema id) followed by Avro binary.
type Encoder struct {
	ID     int
	Schema avro.Schema
}

// LatestEncoder looks up the latest schema of <topic>-value in a Confluent-compatible registry
// with franz-go's registry client.
func LatestEncoder(registry, topic string) (*Encoder, error) {
	cl, err := sr.NewClient(sr.URLs(registry))
	if err != nil {
		return nil, fmt.Errorf("schema registry: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ss, err := cl.SchemaByVersion(ctx, topic+"-value", -1) // -1: the latest version
	if err != nil {
		return nil, fmt.Errorf("schema registry: %s-value: %w", topic, err)
	}
	schema, err := avro.Parse(ss.Schema.Schema)
	if err != nil {
		return nil, fmt.Errorf("schema of %s-value: %w", topic, err)
	}
	return &Encoder{ID: ss.ID, Schema: schema}, nil
}

// Encode one value (a struct or map shaped like the schema).
func (e *Encoder) Encode(v any) ([]byte, error) {
	body, err := avro.Marshal(e.Schema, v)
	if err != nil {
		return nil, err
	}
	var h sr.ConfluentHeader
	out, err := h.AppendEncode(make([]byte, 0, 5+len(body)), e.ID, nil)
	if err != nil {
		return nil, err
	}
	return append(out, body...), nil
}

// EventItem of a TimeSeriesEvent.
type EventItem struct {
	Key   string `avro:"key"`
	Value []byte `avro:"value"`
}

// TimeSeriesEvent as in schemas/avro/TimeSeriesEvent.avsc.
type TimeSeriesEvent struct {
	Namespace    string      `avro:"namespace"`
	TimeSeriesID string      `avro:"time_series_id"`
	EventTime    time.Time   `avro:"event_time"`
	EventID      string      `avro:"event_id"`
	Items        []EventItem `avro:"items"`
	Source       string      `avro:"source"`
}

// CounterEvent as in schemas/avro/CounterEvent.avsc.
type CounterEvent struct {
	Namespace string    `avro:"namespace"`
	Counter   string    `avro:"counter"`
	Op        string    `avro:"op"`
	Delta     int64     `avro:"delta"`
	EventTime time.Time `avro:"event_time"`
	EventID   string    `avro:"event_id"`
	Source    string    `avro:"source"`
}
