package domain

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// SlotName names a resource slot: "cpu", "mem", "cuda.device",
// "cuda.shares", "cuda.mem", or a MIG profile "cuda.device:1g.10gb-mig".
type SlotName string

// Well-known slots.
const (
	SlotCPU        SlotName = "cpu"
	SlotMem        SlotName = "mem"
	SlotCUDADevice SlotName = "cuda.device"
	SlotCUDAShares SlotName = "cuda.shares"
	SlotCUDAMem    SlotName = "cuda.mem"
)

// SlotType says how a slot's amounts are counted.
type SlotType uint8

const (
	// SlotCount: counts with up to three decimals (cpu, devices, shares).
	SlotCount SlotType = iota
	// SlotBytes: whole bytes (mem, cuda.mem); accepts k/m/g/t/p suffixes.
	SlotBytes
	// SlotUnique: a concrete device of a kind, quantity 1 (MIG profiles).
	SlotUnique
)

// SlotTypeOf returns the type of a known slot name.
func SlotTypeOf(name SlotName) (SlotType, bool) {
	switch name {
	case SlotCPU, SlotCUDADevice, SlotCUDAShares, "rocm.device", "atom.device":
		return SlotCount, true
	case SlotMem, SlotCUDAMem:
		return SlotBytes, true
	}
	if IsMIGSlot(name) {
		return SlotUnique, true
	}
	return 0, false
}

// IsMIGSlot reports whether name is a MIG profile slot such as
// "cuda.device:1g.10gb-mig".
func IsMIGSlot(name SlotName) bool {
	s := string(name)
	return strings.HasPrefix(s, "cuda.device:") && strings.HasSuffix(s, "-mig") && len(s) > len("cuda.device:")+len("-mig")
}

// IsAccelerator reports whether name is a GPU-like slot (devices, shares,
// MIG profiles): the slots that are mutually exclusive in one request.
func IsAccelerator(name SlotName) bool {
	switch name {
	case SlotCUDADevice, SlotCUDAShares, "rocm.device", "atom.device":
		return true
	}
	return IsMIGSlot(name)
}

// Quantity is an exact decimal amount in thousandths of a unit (never a
// float): 1 cpu is 1000, 0.25 shares is 250, 64 MiB is 64<<20 * 1000.
type Quantity int64

// QuantityScale is the number of Quantity units in one unit.
const QuantityScale = 1000

// Units returns a Quantity of n whole units.
func Units(n int64) Quantity { return Quantity(n * QuantityScale) }

// Whole returns the quantity's whole units (truncated).
func (q Quantity) Whole() int64 { return int64(q) / QuantityScale }

// IsWhole reports whether q has no fractional part.
func (q Quantity) IsWhole() bool { return int64(q)%QuantityScale == 0 }

// String renders q with only the decimals it needs: "4", "0.5", "0.25".
func (q Quantity) String() string {
	var buf [24]byte
	return string(q.appendDecimal(buf[:0]))
}

// appendDecimal appends q as String renders it.
func (q Quantity) appendDecimal(b []byte) []byte {
	v := uint64(q)
	if q < 0 {
		b = append(b, '-')
		v = -v
	}
	b = strconv.AppendUint(b, v/QuantityScale, 10)
	frac := v % QuantityScale
	if frac == 0 {
		return b
	}
	b = append(b, '.')
	for unit := uint64(QuantityScale / 10); frac != 0; unit /= 10 {
		b = append(b, byte('0'+frac/unit))
		frac %= unit
	}
	return b
}

var byteSuffixes = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "ti": 1 << 40, "tib": 1 << 40,
	"p": 1 << 50, "pb": 1 << 50, "pi": 1 << 50, "pib": 1 << 50,
}

// ParseQuantity parses a decimal amount for a slot of type t. Counts take
// up to three decimals ("0.5"); bytes take a binary suffix ("64m", "4GiB")
// and must come to whole bytes. Negative amounts, NaN, exponents and
// overflow are rejected.
func ParseQuantity(s string, t SlotType) (Quantity, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty amount")
	}
	mult := int64(1)
	if t == SlotBytes {
		i := len(s)
		for i > 0 && (s[i-1] < '0' || s[i-1] > '9') && s[i-1] != '.' {
			i--
		}
		m, ok := byteSuffixes[strings.ToLower(s[i:])]
		if !ok {
			return 0, fmt.Errorf("unknown size suffix %q (use k, m, g, t, p)", s[i:])
		}
		s, mult = s[:i], m
	}
	if s == "" || s[0] == '-' || s[0] == '+' {
		return 0, fmt.Errorf("amount must be a non-negative decimal number")
	}
	intPart, fracPart, hasDot := strings.Cut(s, ".")
	if intPart == "" || (hasDot && fracPart == "") || !allDigits(intPart) || !allDigits(fracPart) {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	if len(intPart)+len(fracPart) > 40 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	if t != SlotBytes && len(strings.TrimRight(fracPart, "0")) > 3 {
		return 0, fmt.Errorf("%q has more than 3 decimals", s)
	}
	milli, ok := quantityFast(intPart, fracPart, mult, t)
	if !ok {
		var err error
		if milli, err = quantityExact(s, intPart, fracPart, mult, t); err != nil {
			return 0, err
		}
	}
	// A request takes one device of a unique slot (checked with the
	// request); capacities, occupancy and limits count several.
	if t == SlotUnique && milli%QuantityScale != 0 {
		return 0, fmt.Errorf("a unique slot counts whole devices, not %q", s)
	}
	return Quantity(milli), nil
}

// parseAmount is ParseQuantity(string(b), t), reading the amounts
// Quantity.String writes (digits, and up to three decimals for counts)
// without a copy of b.
func parseAmount(b []byte, t SlotType) (Quantity, error) {
	var n int64
	i := 0
	for ; i < len(b) && i < 15 && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
	}
	n *= QuantityScale
	switch frac := len(b) - i - 1; {
	case i == 0:
	case frac == -1:
		return Quantity(n), nil
	case t == SlotCount && b[i] == '.' && frac >= 1 && frac <= 3:
		unit := int64(QuantityScale / 10)
		for _, c := range b[i+1:] {
			if c < '0' || c > '9' {
				return ParseQuantity(string(b), t)
			}
			n += int64(c-'0') * unit
			unit /= 10
		}
		return Quantity(n), nil
	}
	return ParseQuantity(string(b), t)
}

// quantityFast computes the common amounts (what Quantity.String writes:
// at most 15 integer digits, at most 3 decimals on counts, whole byte
// counts) in int64 arithmetic; ok is false for anything else, which
// quantityExact then decides.
func quantityFast(intPart, fracPart string, mult int64, t SlotType) (int64, bool) {
	fracPart = strings.TrimRight(fracPart, "0")
	if len(intPart) > 15 || (fracPart != "" && (t == SlotBytes || len(fracPart) > 3)) {
		return 0, false
	}
	n, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil {
		return 0, false
	}
	var frac int64
	for i := range 3 {
		frac *= 10
		if i < len(fracPart) {
			frac += int64(fracPart[i] - '0')
		}
	}
	if n > (math.MaxInt64-frac)/(mult*QuantityScale) {
		return 0, false
	}
	return n*mult*QuantityScale + frac, true
}

// quantityExact computes an amount in exact rational arithmetic: value =
// digits / 10^len(frac) * mult.
func quantityExact(s, intPart, fracPart string, mult int64, t SlotType) (int64, error) {
	r, ok := new(big.Rat).SetString(intPart + "." + fracPart + "0")
	if !ok {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	if t == SlotBytes && !r.IsInt() {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	r.Mul(r, new(big.Rat).SetInt64(QuantityScale))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return r.Num().Int64(), nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Slots is an amount per slot. A missing slot is zero.
type Slots map[SlotName]Quantity

// Clone returns a copy.
func (s Slots) Clone() Slots {
	out := make(Slots, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}

// Add returns s + o.
func (s Slots) Add(o Slots) Slots {
	out := s.Clone()
	for k, v := range o {
		out[k] += v
	}
	return out
}

// Sub returns s - o (may go negative; callers check).
func (s Slots) Sub(o Slots) Slots {
	out := s.Clone()
	for k, v := range o {
		out[k] -= v
	}
	return out
}

// Names returns the slot names in sorted order (deterministic output).
func (s Slots) Names() []SlotName {
	names := make([]SlotName, 0, len(s))
	for k := range s {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// Exceeding returns, sorted, the slots where s asks more than capacity
// holds; a slot missing from capacity holds zero.
func (s Slots) Exceeding(capacity Slots) []SlotName {
	var over []SlotName
	for _, k := range s.Names() {
		if s[k] > capacity[k] {
			over = append(over, k)
		}
	}
	return over
}

// FitsIn reports whether every slot of s fits in capacity.
func (s Slots) FitsIn(capacity Slots) bool {
	for k, v := range s {
		if v > capacity[k] {
			return false
		}
	}
	return true
}

// IsZero reports whether every amount is zero.
func (s Slots) IsZero() bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

// MarshalJSON writes amounts as decimal strings, names sorted:
// {"cpu":"0.5","mem":"67108864"}; nil slots are {}.
func (s Slots) MarshalJSON() ([]byte, error) { return json.Marshal(s, jsonOptions) }

// MarshalJSONTo is MarshalJSON on an encoder (how event payloads holding
// slots are written).
func (s Slots) MarshalJSONTo(enc *jsontext.Encoder) error {
	var buf [8]SlotName
	names := buf[:0]
	for name := range s {
		names = append(names, name)
	}
	slices.Sort(names)
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	var amount [32]byte
	for _, name := range names {
		if err := enc.WriteToken(jsontext.String(string(name))); err != nil {
			return err
		}
		v := append(s[name].appendDecimal(append(amount[:0], '"')), '"')
		if err := enc.WriteValue(v); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// UnmarshalJSON reads amounts as strings or JSON numbers; unknown slot
// names and bad amounts are errors naming the slot, and input that is not
// one JSON object (or null, no slots) is an error too, all KindInvalid.
func (s *Slots) UnmarshalJSON(b []byte) error {
	// Input that is not one JSON value is refused whole first, as
	// encoding/json refuses it, whatever its members hold.
	if !jsontext.Value(b).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)) {
		return errSlotsNotObject()
	}
	var out Slots
	err := out.UnmarshalJSONFrom(jsontext.NewDecoder(bytes.NewReader(b), jsonOptions))
	if derr := (*Error)(nil); errors.As(err, &derr) {
		return derr
	} else if err != nil {
		return errSlotsNotObject()
	}
	*s = out
	return nil
}

// UnmarshalJSONFrom is UnmarshalJSON on a decoder (how event payloads
// holding slots are read). Members written as MarshalJSONTo writes them
// (an amount as a plain decimal string) are parsed as they come; any
// other member is left to ParseSlots, which reports the first bad one in
// name order. A repeated name keeps its last value, as encoding/json does.
func (s *Slots) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case 'n':
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		*s = Slots{}
		return nil
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
	default:
		if err := dec.SkipValue(); err != nil {
			return err
		}
		return errSlotsNotObject()
	}
	out := Slots{}
	var others map[string]stdjson.RawMessage // members for ParseSlots
	for dec.PeekKind() != '}' {
		rawName, err := dec.ReadValue()
		if err != nil {
			return err
		}
		name := slotNameOf(rawName)
		value, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if q, ok := plainAmount(name, value); ok {
			delete(others, string(name))
			out[name] = q
			continue
		}
		if others == nil {
			others = map[string]stdjson.RawMessage{}
		}
		delete(out, name)
		others[string(name)] = bytes.Clone(value)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if others != nil {
		rest, err := ParseSlots(others)
		if err != nil {
			return err
		}
		maps.Copy(out, rest)
	}
	*s = out
	return nil
}

// errSlotsNotObject is the error of slots that are not a JSON object.
func errSlotsNotObject() *Error {
	return Invalid("", "", "resource slots must be an object of slot name to amount")
}

// slotNameOf is the name a JSON string read by a decoder holds, without a
// copy for the well-known slot names.
func slotNameOf(raw jsontext.Value) SlotName {
	if v := raw[1 : len(raw)-1]; bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
		return SlotName(internString(v))
	}
	// The decoder has read the string: the one error left to report is
	// invalid UTF-8, which becomes U+FFFD as encoding/json has it.
	name, _ := jsontext.AppendUnquote(nil, raw)
	return SlotName(name)
}

// plainAmount parses an amount written as MarshalJSONTo writes it (a
// string without escapes) for a known slot; ok is false for anything
// else, ParseSlots's to read or refuse.
func plainAmount(name SlotName, value jsontext.Value) (Quantity, bool) {
	t, known := SlotTypeOf(name)
	if !known || len(value) < 2 || value[0] != '"' || bytes.IndexByte(value[1:len(value)-1], '\\') >= 0 {
		return 0, false
	}
	q, err := parseAmount(value[1:len(value)-1], t)
	return q, err == nil
}

// ParseSlots parses slot amounts given as JSON strings or numbers. Errors
// are KindInvalid and name the slot.
func ParseSlots(raw map[string]stdjson.RawMessage) (Slots, error) {
	out := make(Slots, len(raw))
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		name := SlotName(k)
		t, ok := SlotTypeOf(name)
		if !ok {
			return nil, Invalid("", k, "unknown resource slot (known: cpu, mem, cuda.device, cuda.shares, cuda.mem, cuda.device:<profile>-mig)")
		}
		v := raw[k]
		var str string
		switch {
		case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && !bytes.ContainsAny(v[1:len(v)-1], "\"\\"):
			str = string(v[1 : len(v)-1]) // a plain string, as MarshalJSON writes
		case len(v) > 0 && v[0] == '"':
			if err := stdjson.Unmarshal(v, &str); err != nil {
				return nil, Invalid("", k, "amount must be a string or a number")
			}
		default:
			var num stdjson.Number
			if err := stdjson.Unmarshal(v, &num); err != nil {
				return nil, Invalid("", k, "amount must be a string or a number")
			}
			str = num.String()
		}
		q, err := ParseQuantity(str, t)
		if err != nil {
			return nil, Invalid("", k, "%v", err)
		}
		out[name] = q
	}
	return out, nil
}

// FormatAmount renders an amount of a slot for people: bytes with a
// binary suffix when they divide evenly ("4G", "64M"), counts as decimals
// ("0.5").
func FormatAmount(name SlotName, q Quantity) string {
	if t, _ := SlotTypeOf(name); t != SlotBytes || !q.IsWhole() {
		return q.String()
	}
	b := q.Whole()
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"P", 1 << 50}, {"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if b >= u.size && b%u.size == 0 {
			return strconv.FormatInt(b/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}

// internString is string(v) without a copy for the well-known slot names,
// which every event holding slots repeats.
func internString(v []byte) string {
	switch string(v) {
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
	}
	return string(v)
}
