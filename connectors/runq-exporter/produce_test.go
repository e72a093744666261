package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// With Kafka unreachable and the buffer full, a sample is refused at once and counted as
// kafka_full: the BPF reader never blocks on the producer.
func TestAFullProducerBufferDropsInsteadOfBlocking(t *testing.T) {
	client, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1"), kgo.MaxBufferedRecords(1),
		kgo.RecordDeliveryTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	reasons := make(chan string, 2)
	for i := 0; i < 2; i++ {
		client.TryProduce(context.Background(), &kgo.Record{Topic: "t", Value: []byte("x")}, func(_ *kgo.Record, err error) {
			reasons <- dropReason(err)
		})
	}
	if got := <-reasons; got != "kafka_full" { // the second record: the first holds the only slot
		t.Fatalf("the record over the buffer was %q, want kafka_full", got)
	}
}

func TestDropReasons(t *testing.T) {
	if dropReason(nil) != "" || dropReason(kgo.ErrMaxBuffered) != "kafka_full" || dropReason(errors.New("x")) != "kafka" {
		t.Fatal("drop reasons")
	}
}
