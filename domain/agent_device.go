package domain

import (
	"bytes"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DeviceShareCapacity is the share capacity of one accelerator device: a
// whole GPU (or MIG device) is 1.0, and fractional requests take parts of it.
const DeviceShareCapacity = Quantity(QuantityScale)

// Device is one accelerator an agent reported: a whole GPU or a MIG device.
type Device struct {
	// ID is the GPU UUID or the MIG device UUID.
	ID string `json:"id"`
	// Kind is the slot the device serves: cuda.device for a whole GPU
	// (which also serves cuda.shares), the MIG profile slot for a MIG device
	// (e.g. cuda.device:1g.10gb-mig), rocm.device, ...
	Kind SlotName `json:"kind"`
	// Model is the product name, for display.
	Model string `json:"model,omitempty"`
	// Memory is the device memory in bytes.
	Memory int64 `json:"memory,omitempty"`
}

// DeviceShare is the part of one device assigned to a kernel: 1.0 for a
// whole device, a fraction (to 0.01) for cuda.shares.
type DeviceShare struct {
	DeviceID string
	Amount   Quantity
}

type deviceShareWire struct {
	DeviceID string `json:"device_id"`
	Amount   string `json:"amount"`
}

// MarshalJSON writes the amount as a decimal string: {"device_id":"GPU-1","amount":"0.5"}.
func (d DeviceShare) MarshalJSON() ([]byte, error) { return json.Marshal(d, jsonOptions) }

// MarshalJSONTo is MarshalJSON on an encoder (how event payloads holding
// shares are written).
func (d DeviceShare) MarshalJSONTo(enc *jsontext.Encoder) error {
	var amount [32]byte
	for _, tok := range []jsontext.Token{jsontext.BeginObject, jsontext.String("device_id"), jsontext.String(d.DeviceID), jsontext.String("amount")} {
		if err := enc.WriteToken(tok); err != nil {
			return err
		}
	}
	if err := enc.WriteValue(append(d.Amount.appendDecimal(append(amount[:0], '"')), '"')); err != nil {
		return err
	}
	return enc.WriteToken(jsontext.EndObject)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *DeviceShare) UnmarshalJSON(b []byte) error {
	return d.UnmarshalJSONFrom(jsontext.NewDecoder(bytes.NewReader(b), jsonOptions))
}

// UnmarshalJSONFrom is UnmarshalJSON on a decoder (how event payloads
// holding shares are read). A missing or bad amount is KindInvalid.
func (d *DeviceShare) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var w deviceShareWire
	if err := json.UnmarshalDecode(dec, &w); err != nil {
		return err
	}
	q, err := parseAmount([]byte(w.Amount), SlotCount)
	if err != nil {
		return Invalid("", "amount", "%v", err)
	}
	*d = DeviceShare{DeviceID: w.DeviceID, Amount: q}
	return nil
}

// deviceKindFor returns the kind of device that serves an accelerator slot:
// fractional CUDA shares are taken from whole GPUs.
func deviceKindFor(slot SlotName) SlotName {
	if slot == SlotCUDAShares {
		return SlotCUDADevice
	}
	return slot
}

// acceleratorsOf returns, sorted, the accelerator slots s asks a non-zero
// amount of.
func acceleratorsOf(s Slots) []SlotName {
	var out []SlotName
	for _, name := range s.Names() {
		if IsAccelerator(name) && s[name] != 0 {
			out = append(out, name)
		}
	}
	return out
}

// sortedShares returns a copy of shares sorted by device id, the form
// events carry so that equal assignments compare equal.
func sortedShares(shares []DeviceShare) []DeviceShare {
	if len(shares) == 0 {
		return nil
	}
	out := append([]DeviceShare(nil), shares...)
	sort.Slice(out, func(i, j int) bool { return out[i].DeviceID < out[j].DeviceID })
	return out
}

func equalShares(a, b []DeviceShare) bool {
	a, b = sortedShares(a), sortedShares(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkDeviceShares verifies that a device assignment matches the slots it
// serves: no devices without an accelerator slot; with one, positive
// amounts on distinct devices summing to the slot's amount, whole devices
// for every slot but cuda.shares, and never more than one device's
// capacity on one device. It does not know the agent's devices (see
// Agent.Allocate for that).
func checkDeviceShares(op, field string, slots Slots, shares []DeviceShare) error {
	accels := acceleratorsOf(slots)
	switch {
	case len(accels) > 1:
		return Invalid(op, field, "accelerator slots %s are mutually exclusive", joinSlotNames(accels))
	case len(accels) == 0:
		if len(shares) > 0 {
			return Invalid(op, field, "devices assigned but no accelerator slot requested")
		}
		return nil
	}
	slot := accels[0]
	if len(shares) == 0 {
		return Invalid(op, field, "%s requested but no device assigned", slot)
	}
	seen := make(map[string]bool, len(shares))
	var sum Quantity
	for _, d := range shares {
		switch {
		case d.DeviceID == "":
			return Invalid(op, field, "a device id is empty")
		case seen[d.DeviceID]:
			return Invalid(op, field, "device %s assigned twice", d.DeviceID)
		case d.Amount <= 0:
			return Invalid(op, field, "device %s: amount %s must be positive", d.DeviceID, d.Amount)
		case d.Amount > DeviceShareCapacity:
			return Invalid(op, field, "device %s: amount %s exceeds one device (%s)", d.DeviceID, d.Amount, DeviceShareCapacity)
		case slot != SlotCUDAShares && d.Amount != DeviceShareCapacity:
			return Invalid(op, field, "device %s: %s takes whole devices, not %s", d.DeviceID, slot, d.Amount)
		}
		seen[d.DeviceID] = true
		sum += d.Amount
	}
	if sum != slots[slot] {
		return Invalid(op, field, "devices sum to %s but %s is %s", sum, slot, slots[slot])
	}
	return nil
}

func joinSlotNames(names []SlotName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
