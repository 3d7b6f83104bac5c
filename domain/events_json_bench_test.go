package domain

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// hotSamples are hot events as the scheduling benchmark records them: a
// one-kernel request for cpus, memory and a share of a GPU, its pending
// update and placement, the allocation on the agent, and the registration
// of an agent with 8 GPUs.
func hotSamples() []Event {
	when := time.Date(2026, 11, 21, 10, 0, 0, 123456789, time.UTC)
	slots := Slots{SlotCPU: Units(4), SlotMem: gib(16), SlotCUDAShares: q("0.5")}
	shares := []DeviceShare{{DeviceID: "GPU-0195a0c0-0000-7000-8000-000000000003", Amount: q("0.5")}}
	devices := make([]Device, 8)
	for i := range devices {
		devices[i] = Device{ID: fmt.Sprintf("GPU-0195a0c0-0000-7000-8000-00000000000%d", i), Kind: SlotCUDADevice, Model: "NVIDIA A100-SXM4-80GB", Memory: 80 << 30}
	}
	return []Event{
		SessionRequested{
			SessionID: sessionID, Name: "bench-000042", Owner: Owner{UserID: "user-017", AccessKey: "AK017"},
			Domain: "default", Project: "ml", ResourceGroup: "default", Type: SessionInteractive, Image: "cr.io/pytorch:2.4",
			Priority: 10, ClusterMode: ClusterSingleNode, Kernels: []KernelSpec{{KernelID: kernelA, Role: KernelMain, Slots: slots}}, At: when,
		},
		SessionPendingUpdated{Reason: "no-available-instances", Details: []string{"cuda.shares: no agent has 0.5 free", "mem: 3 agents lack 16G"}, Tries: 3, At: when},
		SessionScheduled{Kernels: []KernelPlacement{{KernelID: kernelA, AgentID: "agent-0421", Devices: shares}}, Reason: ReasonScheduled, At: when},
		AgentRegistered{AgentID: "agent-0421", Architecture: "x86_64", Capacity: Slots{SlotCPU: Units(64), SlotMem: gib(512), SlotCUDADevice: Units(8)}, Devices: devices, At: when},
		AgentAllocated{KernelID: kernelA, SessionID: sessionID, Slots: slots, Devices: shares, At: when},
	}
}

// BenchmarkDecodeHotEvents: DecodeEvent (go-json-experiment/json with
// encoding/json's semantics, see jsonOptions) against json.Unmarshal, per
// event type.
func BenchmarkDecodeHotEvents(b *testing.B) {
	for _, e := range hotSamples() {
		data, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("%T", e)[len("domain."):]
		b.Run(name+"/cairn", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeEvent(e.EventType(), SchemaVersion, data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := jsonUnmarshalLike(e, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// jsonUnmarshalLike decodes data with json.Unmarshal into a new value of
// e's type.
func jsonUnmarshalLike(e Event, data []byte) error {
	return json.Unmarshal(data, reflect.New(reflect.TypeOf(e)).Interface())
}

// BenchmarkEncodeHotEvents: MarshalEvent (go-json-experiment/json)
// against json.Marshal, per event type.
func BenchmarkEncodeHotEvents(b *testing.B) {
	for _, e := range hotSamples() {
		name := fmt.Sprintf("%T", e)[len("domain."):]
		b.Run(name+"/cairn", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := MarshalEvent(e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
