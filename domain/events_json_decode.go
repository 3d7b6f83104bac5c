package domain

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain/internal/plainjson"
)

// The scheduler's hot events (a session's request, its pending updates,
// its placement, and the agents' registrations and allocations) are
// decoded every time a stream is loaded, thousands per scheduling pass, so
// they decode themselves (selfDecoding): a fast path reads the plain JSON
// json.Marshal writes (any key order and spacing, strings without
// escapes) into exactly the value json.Unmarshal would, and anything it is
// not sure of (an escape, an unknown, repeated or differently cased key,
// null, a number of another form, invalid UTF-8, trailing data) is decoded
// by json.Unmarshal from the start, whose result and errors stand. Fuzz
// tests hold the fast path to encoding/json.

func (e *SessionRequested) decodeSelf(b []byte) error      { return decodePlain(e, b) }
func (e *SessionPendingUpdated) decodeSelf(b []byte) error { return decodePlain(e, b) }
func (e *SessionScheduled) decodeSelf(b []byte) error      { return decodePlain(e, b) }
func (e *AgentRegistered) decodeSelf(b []byte) error       { return decodePlain(e, b) }
func (e *AgentAllocated) decodeSelf(b []byte) error        { return decodePlain(e, b) }

// decodePlain decodes b into e through its fast path (scan) when b is
// the plain shape it reads whole, else, from a zero value, through
// json.Unmarshal.
func decodePlain[E any, P interface {
	*E
	scan(*plainjson.Scanner) bool
}](e P, b []byte) error {
	s := plainjson.Scanner{Data: b}
	s.Space()
	if e.scan(&s) && s.End() {
		return nil
	}
	var zero E
	*e = zero
	return json.Unmarshal(b, e)
}

func (e *SessionRequested) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "session_id":
			return seen.first(0) && scanUUID(s, &e.SessionID)
		case "name":
			return seen.first(1) && scanString(s, &e.Name)
		case "owner":
			return seen.first(2) && e.Owner.scan(s)
		case "domain":
			return seen.first(3) && scanString(s, &e.Domain)
		case "project":
			return seen.first(4) && scanString(s, &e.Project)
		case "resource_group":
			return seen.first(5) && scanString(s, &e.ResourceGroup)
		case "type":
			return seen.first(6) && scanString(s, &e.Type)
		case "image":
			return seen.first(7) && scanString(s, &e.Image)
		case "command":
			return seen.first(8) && scanString(s, &e.Command)
		case "env":
			return seen.first(9) && scanStringMap(s, &e.Env)
		case "priority":
			return seen.first(10) && scanInt(s, &e.Priority)
		case "cluster_mode":
			return seen.first(11) && scanString(s, &e.ClusterMode)
		case "kernels":
			return seen.first(12) && scanSlice(s, &e.Kernels, (*KernelSpec).scan)
		case "mounts":
			return seen.first(13) && scanSlice(s, &e.Mounts, (*VFolderMount).scan)
		case "at":
			return seen.first(14) && scanTime(s, &e.At)
		case "starts_at":
			return seen.first(15) && scanTime(s, &e.StartsAt)
		case "dependencies":
			return seen.first(16) && scanSlice(s, &e.Dependencies, scanUUIDElem)
		case "architecture":
			return seen.first(17) && scanString(s, &e.Architecture)
		}
		return false
	})
}

func (e *SessionPendingUpdated) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "reason":
			return seen.first(0) && scanString(s, &e.Reason)
		case "details":
			return seen.first(1) && scanSlice(s, &e.Details, scanStringElem)
		case "tries":
			return seen.first(2) && scanInt(s, &e.Tries)
		case "at":
			return seen.first(3) && scanTime(s, &e.At)
		}
		return false
	})
}

func (e *SessionScheduled) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "kernels":
			return seen.first(0) && scanSlice(s, &e.Kernels, (*KernelPlacement).scan)
		case "reason":
			return seen.first(1) && scanString(s, &e.Reason)
		case "at":
			return seen.first(2) && scanTime(s, &e.At)
		}
		return false
	})
}

func (e *AgentRegistered) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "agent_id":
			return seen.first(0) && scanString(s, &e.AgentID)
		case "architecture":
			return seen.first(1) && scanString(s, &e.Architecture)
		case "capacity":
			return seen.first(2) && scanSlotsInto(s, &e.Capacity)
		case "devices":
			return seen.first(3) && scanSlice(s, &e.Devices, (*Device).scan)
		case "seal_key":
			return seen.first(5) && scanString(s, &e.SealKey)
		case "at":
			return seen.first(4) && scanTime(s, &e.At)
		}
		return false
	})
}

func (e *AgentAllocated) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "kernel_id":
			return seen.first(0) && scanUUID(s, &e.KernelID)
		case "session_id":
			return seen.first(1) && scanUUID(s, &e.SessionID)
		case "slots":
			return seen.first(2) && scanSlotsInto(s, &e.Slots)
		case "devices":
			return seen.first(3) && scanSlice(s, &e.Devices, (*DeviceShare).scan)
		case "at":
			return seen.first(4) && scanTime(s, &e.At)
		}
		return false
	})
}

func (o *Owner) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "user_id":
			return seen.first(0) && scanString(s, &o.UserID)
		case "access_key":
			return seen.first(1) && scanString(s, &o.AccessKey)
		}
		return false
	})
}

func (k *KernelSpec) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "kernel_id":
			return seen.first(0) && scanUUID(s, &k.KernelID)
		case "role":
			return seen.first(1) && scanString(s, &k.Role)
		case "slots":
			return seen.first(2) && scanSlotsInto(s, &k.Slots)
		}
		return false
	})
}

func (k *KernelPlacement) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "kernel_id":
			return seen.first(0) && scanUUID(s, &k.KernelID)
		case "agent_id":
			return seen.first(1) && scanString(s, &k.AgentID)
		case "devices":
			return seen.first(2) && scanSlice(s, &k.Devices, (*DeviceShare).scan)
		}
		return false
	})
}

func (m *VFolderMount) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "folder_id":
			return seen.first(0) && scanString(s, &m.FolderID)
		case "name":
			return seen.first(1) && scanString(s, &m.Name)
		case "host":
			return seen.first(2) && scanString(s, &m.Host)
		case "path":
			return seen.first(3) && scanString(s, &m.Path)
		case "permission":
			return seen.first(4) && scanString(s, &m.Permission)
		}
		return false
	})
}

func (d *Device) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.first(0) && scanString(s, &d.ID)
		case "kind":
			return seen.first(1) && scanString(s, &d.Kind)
		case "model":
			return seen.first(2) && scanString(s, &d.Model)
		case "memory":
			if !seen.first(3) {
				return false
			}
			var ok bool
			d.Memory, ok = s.Int(64)
			return ok
		}
		return false
	})
}

// scan reads a share as UnmarshalJSON does, declining an amount that does
// not parse (UnmarshalJSON's error, which encoding/json then reports).
func (d *DeviceShare) scan(s *plainjson.Scanner) bool {
	var seen fieldSet
	var amount []byte
	if !s.Object(func(key []byte) bool {
		switch string(key) {
		case "device_id":
			return seen.first(0) && scanString(s, &d.DeviceID)
		case "amount":
			var ok bool
			amount, ok = s.Str()
			return seen.first(1) && ok
		}
		return false
	}) {
		return false
	}
	q, err := parseAmount(amount, SlotCount)
	d.Amount = q
	return err == nil
}

// fieldSet is the members of an object read so far, by index: a repeated
// key is left to encoding/json.
type fieldSet uint32

// first records member i and reports whether it is its first time.
func (f *fieldSet) first(i uint) bool {
	if *f&(1<<i) != 0 {
		return false
	}
	*f |= 1 << i
	return true
}

func scanString[S ~string](s *plainjson.Scanner, dst *S) bool {
	v, ok := s.Str()
	*dst = S(internString(v))
	return ok
}

// internString is string(v) without a copy for the values most events
// repeat (roles, session types, cluster modes, slot names, scheduling
// reasons).
func internString(v []byte) string {
	switch string(v) {
	case string(KernelMain):
		return string(KernelMain)
	case string(KernelSub):
		return string(KernelSub)
	case string(SessionInteractive):
		return string(SessionInteractive)
	case string(SessionBatch):
		return string(SessionBatch)
	case string(SessionInference):
		return string(SessionInference)
	case string(ClusterSingleNode):
		return string(ClusterSingleNode)
	case string(ClusterMultiNode):
		return string(ClusterMultiNode)
	case string(SlotCPU):
		return string(SlotCPU)
	case string(SlotMem):
		return string(SlotMem)
	case string(SlotCUDADevice):
		return string(SlotCUDADevice)
	case string(SlotCUDAShares):
		return string(SlotCUDAShares)
	case string(SlotCUDAMem):
		return string(SlotCUDAMem)
	case ReasonScheduled:
		return ReasonScheduled
	case ReasonNoAvailableInstances:
		return ReasonNoAvailableInstances
	case ReasonPredicateChecks:
		return ReasonPredicateChecks
	}
	return string(v)
}

func scanStringElem(dst *string, s *plainjson.Scanner) bool { return scanString(s, dst) }

func scanInt(s *plainjson.Scanner, dst *int) bool {
	v, ok := s.Int(strconv.IntSize)
	*dst = int(v)
	return ok
}

// scanTime reads a time as time.Time's UnmarshalJSON does (RFC 3339,
// strictly).
func scanTime(s *plainjson.Scanner, dst *time.Time) bool {
	v, ok := s.Str()
	return ok && dst.UnmarshalText(v) == nil
}

// scanUUID reads a uuid as encoding/json does (its UnmarshalText on the
// string).
func scanUUID(s *plainjson.Scanner, dst *uuid.UUID) bool {
	v, ok := s.Str()
	return ok && dst.UnmarshalText(v) == nil
}

func scanUUIDElem(dst *uuid.UUID, s *plainjson.Scanner) bool { return scanUUID(s, dst) }

// scanSlotsInto reads slots as Slots.UnmarshalJSON's fast path does (so
// both give the same value).
func scanSlotsInto(s *plainjson.Scanner, dst *Slots) bool {
	v, ok := scanSlots(s)
	*dst = v
	return ok
}

// scanSlice reads an array as encoding/json does into a nil slice: [] is
// an empty slice, null (what it writes for a nil slice) is nil.
func scanSlice[T any](s *plainjson.Scanner, dst *[]T, elem func(*T, *plainjson.Scanner) bool) bool {
	if s.Null() {
		return true
	}
	var out []T
	var zero T
	empty, ok := s.Array(func() bool {
		out = append(out, zero)
		return elem(&out[len(out)-1], s)
	})
	if empty {
		out = []T{}
	}
	*dst = out
	return ok
}

// scanStringMap reads an object of strings as encoding/json does into a
// nil map: {} is an empty map, and a repeated key keeps its last value.
func scanStringMap(s *plainjson.Scanner, dst *map[string]string) bool {
	out := map[string]string{}
	*dst = out
	return s.Object(func(key []byte) bool {
		v, ok := s.Str()
		out[string(key)] = string(v)
		return ok
	})
}
