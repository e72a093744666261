// Package sink turns samples into Tally's Avro events (Confluent wire format, schemas from
// the registry) and produces them to the same topics as every other producer.
package sink

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/hamba/avro/v2"
)

// Encoder writes one topic's values: magic byte 0, the 4-byte schema id, Avro binary.
type Encoder struct {
	ID     int
	Schema avro.Schema
}

// LatestEncoder looks up the latest schema of <topic>-value in a Confluent-compatible registry.
func LatestEncoder(registry, topic string) (*Encoder, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(registry + "/subjects/" + url.PathEscape(topic+"-value") + "/versions/latest")
	if err != nil {
		return nil, fmt.Errorf("schema registry: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("schema registry: %s-value: HTTP %d", topic, resp.StatusCode)
	}
	var v struct {
		ID     int    `json:"id"`
		Schema string `json:"schema"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return nil, fmt.Errorf("schema registry: %w", err)
	}
	schema, err := avro.Parse(v.Schema)
	if err != nil {
		return nil, fmt.Errorf("schema of %s-value: %w", topic, err)
	}
	return &Encoder{ID: v.ID, Schema: schema}, nil
}

// Encode one value (a map shaped like the schema).
func (e *Encoder) Encode(v any) ([]byte, error) {
	body, err := avro.Marshal(e.Schema, v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 5, 5+len(body))
	binary.BigEndian.PutUint32(out[1:], uint32(e.ID))
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
