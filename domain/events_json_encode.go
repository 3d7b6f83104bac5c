package domain

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain/internal/plainjson"
)

// MarshalEvent returns e's JSON encoding, the bytes json.Marshal(e)
// writes (and its error). The scheduler's hot events (those that decode
// themselves, see events_json_decode.go) are written by hand, without
// reflection; a fuzz test holds them to encoding/json.
func MarshalEvent(e Event) ([]byte, error) {
	buf := encodeBuffers.Get().(*[]byte)
	b, ok := appendEventJSON((*buf)[:0], e)
	var out []byte
	if ok {
		out = bytes.Clone(b)
	}
	if cap(b) <= 64<<10 {
		*buf = b[:0]
		encodeBuffers.Put(buf)
	}
	if ok {
		return out, nil
	}
	return json.Marshal(e)
}

// encodeBuffers are MarshalEvent's scratch buffers: the result is copied
// out at its size.
var encodeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// appendEventJSON appends e's JSON encoding to b; ok is false for an
// event it does not write by hand, or one json.Marshal refuses (a time
// outside years 0 to 9999), b then being meaningless.
func appendEventJSON(b []byte, e Event) (_ []byte, ok bool) {
	switch e := e.(type) {
	case SessionRequested:
		return e.appendJSON(b)
	case SessionPendingUpdated:
		return e.appendJSON(b)
	case SessionScheduled:
		return e.appendJSON(b)
	case AgentRegistered:
		return e.appendJSON(b)
	case AgentAllocated:
		return e.appendJSON(b)
	}
	return b, false
}

func (e *SessionRequested) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"session_id":`...)
	b = appendUUID(b, e.SessionID)
	b = appendMember(b, `,"name":`, e.Name)
	b = appendMember(b, `,"owner":{"user_id":`, e.Owner.UserID)
	b = appendMember(b, `,"access_key":`, e.Owner.AccessKey)
	b = appendMember(b, `},"domain":`, e.Domain)
	b = appendMember(b, `,"project":`, e.Project)
	b = appendMember(b, `,"resource_group":`, e.ResourceGroup)
	b = appendMember(b, `,"type":`, string(e.Type))
	b = appendMember(b, `,"image":`, e.Image)
	if e.Command != "" {
		b = appendMember(b, `,"command":`, e.Command)
	}
	if len(e.Env) > 0 {
		b = append(b, `,"env":`...)
		b = appendStringMap(b, e.Env)
	}
	b = append(b, `,"priority":`...)
	b = strconv.AppendInt(b, int64(e.Priority), 10)
	b = appendMember(b, `,"cluster_mode":`, string(e.ClusterMode))
	b = append(b, `,"kernels":`...)
	b = appendSlice(b, e.Kernels, (*KernelSpec).appendJSON)
	if len(e.Mounts) > 0 {
		b = append(b, `,"mounts":`...)
		b = appendSlice(b, e.Mounts, (*VFolderMount).appendJSON)
	}
	b = append(b, `,"at":`...)
	b, ok := appendTime(b, e.At)
	if !e.StartsAt.IsZero() {
		b = append(b, `,"starts_at":`...)
		var startsOK bool
		b, startsOK = appendTime(b, e.StartsAt)
		ok = ok && startsOK
	}
	if len(e.Dependencies) > 0 {
		b = append(b, `,"dependencies":`...)
		b = appendSlice(b, e.Dependencies, appendUUIDElem)
	}
	if e.Architecture != "" {
		b = appendMember(b, `,"architecture":`, e.Architecture)
	}
	return append(b, '}'), ok
}

func (e *SessionPendingUpdated) appendJSON(b []byte) ([]byte, bool) {
	b = appendMember(b, `{"reason":`, e.Reason)
	if len(e.Details) > 0 {
		b = append(b, `,"details":`...)
		b = appendSlice(b, e.Details, appendStringElem)
	}
	b = append(b, `,"tries":`...)
	b = strconv.AppendInt(b, int64(e.Tries), 10)
	b = append(b, `,"at":`...)
	b, ok := appendTime(b, e.At)
	return append(b, '}'), ok
}

func (e *SessionScheduled) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"kernels":`...)
	b = appendSlice(b, e.Kernels, (*KernelPlacement).appendJSON)
	b = appendMember(b, `,"reason":`, e.Reason)
	b = append(b, `,"at":`...)
	b, ok := appendTime(b, e.At)
	return append(b, '}'), ok
}

func (e *AgentRegistered) appendJSON(b []byte) ([]byte, bool) {
	b = appendMember(b, `{"agent_id":`, e.AgentID)
	b = appendMember(b, `,"architecture":`, e.Architecture)
	b = append(b, `,"capacity":`...)
	b = e.Capacity.appendJSON(b)
	if len(e.Devices) > 0 {
		b = append(b, `,"devices":`...)
		b = appendSlice(b, e.Devices, (*Device).appendJSON)
	}
	if e.SealKey != "" {
		b = appendMember(b, `,"seal_key":`, e.SealKey)
	}
	b = append(b, `,"at":`...)
	b, ok := appendTime(b, e.At)
	return append(b, '}'), ok
}

func (e *AgentAllocated) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"kernel_id":`...)
	b = appendUUID(b, e.KernelID)
	b = append(b, `,"session_id":`...)
	b = appendUUID(b, e.SessionID)
	b = append(b, `,"slots":`...)
	b = e.Slots.appendJSON(b)
	if len(e.Devices) > 0 {
		b = append(b, `,"devices":`...)
		b = appendSlice(b, e.Devices, (*DeviceShare).appendJSON)
	}
	b = append(b, `,"at":`...)
	b, ok := appendTime(b, e.At)
	return append(b, '}'), ok
}

func (k *KernelSpec) appendJSON(b []byte) []byte {
	b = append(b, `{"kernel_id":`...)
	b = appendUUID(b, k.KernelID)
	b = appendMember(b, `,"role":`, string(k.Role))
	b = append(b, `,"slots":`...)
	b = k.Slots.appendJSON(b)
	return append(b, '}')
}

func (k *KernelPlacement) appendJSON(b []byte) []byte {
	b = append(b, `{"kernel_id":`...)
	b = appendUUID(b, k.KernelID)
	b = appendMember(b, `,"agent_id":`, k.AgentID)
	if len(k.Devices) > 0 {
		b = append(b, `,"devices":`...)
		b = appendSlice(b, k.Devices, (*DeviceShare).appendJSON)
	}
	return append(b, '}')
}

func (m *VFolderMount) appendJSON(b []byte) []byte {
	b = appendMember(b, `{"folder_id":`, m.FolderID)
	b = appendMember(b, `,"name":`, m.Name)
	b = appendMember(b, `,"host":`, m.Host)
	b = appendMember(b, `,"path":`, m.Path)
	b = appendMember(b, `,"permission":`, string(m.Permission))
	return append(b, '}')
}

func (d *Device) appendJSON(b []byte) []byte {
	b = appendMember(b, `{"id":`, d.ID)
	b = appendMember(b, `,"kind":`, string(d.Kind))
	if d.Model != "" {
		b = appendMember(b, `,"model":`, d.Model)
	}
	if d.Memory != 0 {
		b = append(b, `,"memory":`...)
		b = strconv.AppendInt(b, d.Memory, 10)
	}
	return append(b, '}')
}

// appendJSON writes what MarshalJSON writes.
func (d *DeviceShare) appendJSON(b []byte) []byte {
	b = appendMember(b, `{"device_id":`, d.DeviceID)
	b = append(b, `,"amount":"`...)
	b = d.Amount.appendDecimal(b)
	return append(b, `"}`...)
}

// appendJSON writes what MarshalJSON writes: names sorted, amounts as
// strings, {} for nil slots.
func (s Slots) appendJSON(b []byte) []byte {
	var buf [8]SlotName
	names := buf[:0]
	for name := range s {
		names = append(names, name)
	}
	slices.Sort(names)
	b = append(b, '{')
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = plainjson.AppendString(b, string(name))
		b = append(b, `:"`...)
		b = s[name].appendDecimal(b)
		b = append(b, '"')
	}
	return append(b, '}')
}

// appendMember appends the key (with its punctuation) and the quoted
// string.
func appendMember(b []byte, key, s string) []byte {
	return plainjson.AppendString(append(b, key...), s)
}

func appendStringElem(s *string, b []byte) []byte { return plainjson.AppendString(b, *s) }

// appendStringMap writes a map of strings as encoding/json does: keys
// sorted.
func appendStringMap(b []byte, m map[string]string) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		if i > 0 {
			b = append(b, ',')
		}
		b = plainjson.AppendString(b, k)
		b = append(b, ':')
		b = plainjson.AppendString(b, m[k])
	}
	return append(b, '}')
}

// appendSlice writes a slice as encoding/json does: null for nil.
func appendSlice[T any](b []byte, s []T, elem func(*T, []byte) []byte) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(&s[i], b)
	}
	return append(b, ']')
}

// appendTime writes a time as its MarshalJSON does; ok is false when it
// refuses it (a year outside 0 to 9999, a zone offset of 24 hours or
// more).
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	out, err := t.AppendText(append(b, '"'))
	if err != nil {
		return b, false
	}
	return append(out, '"'), true
}

// appendUUID writes a uuid quoted, as its MarshalText does.
func appendUUID(b []byte, u uuid.UUID) []byte {
	const digits = "0123456789abcdef"
	b = append(b, '"')
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, digits[c>>4], digits[c&0x0f])
	}
	return append(b, '"')
}

func appendUUIDElem(u *uuid.UUID, b []byte) []byte { return appendUUID(b, *u) }
