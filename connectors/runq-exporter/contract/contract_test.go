package contract

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The model module owns these names; a rename there must reach the exporter too.
func TestNamesMatchTheModel(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "model", "topics.json"))
	if err != nil {
		t.Fatalf("model/topics.json: %v", err)
	}
	var model struct {
		Topics []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"topics"`
		SchedNamespaces map[string]string `json:"sched_namespaces"`
	}
	if err := json.Unmarshal(raw, &model); err != nil {
		t.Fatalf("model/topics.json: %v", err)
	}
	topics := map[string]string{}
	for _, tp := range model.Topics {
		topics[tp.ID] = tp.Name
	}
	for id, got := range map[string]string{"timeseries_events": TimeSeriesEventsTopic, "counter_events": CounterEventsTopic} {
		if topics[id] != got {
			t.Errorf("topic %s: the exporter writes to %q, the model names it %q", id, got, topics[id])
		}
	}
	for role, got := range map[string]string{"runq": RunqNamespace, "switchout": SwitchOutNamespace} {
		if model.SchedNamespaces[role] != got {
			t.Errorf("namespace %s: the exporter uses %q, the model names it %q", role, got, model.SchedNamespaces[role])
		}
	}
}
