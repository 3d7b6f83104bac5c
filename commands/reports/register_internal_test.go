package reports

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

// A stream written through the API also holds the requests' access
// records: decodeAll leaves them out and numbers the aggregate's events
// densely, so the stream folds.
func TestDecodeAllLeavesOutAccessRecords(t *testing.T) {
	record := func(revision int64, ev domain.Event) eventstore.RecordedEvent {
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		return eventstore.RecordedEvent{Revision: revision, Type: ev.EventType(), Version: domain.SchemaVersion, Data: data}
	}
	at := time.Unix(1, 0).UTC()
	recs := []eventstore.RecordedEvent{
		record(0, domain.AccessLogged{Record: audit.Record{Time: at, Action: "agent.register", Outcome: audit.Success}}),
		record(1, domain.AgentRegistered{AgentID: "a1", Architecture: "x86_64", Capacity: domain.Slots{domain.SlotCPU: domain.Units(1)}, At: at}),
	}
	events, err := decodeAll(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Revision != 0 {
		t.Fatalf("decoded %+v, want the registration alone at revision 0", events)
	}
	a, err := domain.RehydrateAgent(events)
	if err != nil || !a.Exists() {
		t.Fatalf("agent %+v, %v", a, err)
	}
}
