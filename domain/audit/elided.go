package audit

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Elided is a record its reader may not see (another domain's, for a
// domain auditor), as an export shows it: its place in the chain and
// nothing else, so that the export still verifies as a chain. Its JSON is
// exactly {"seq":N,"prev_hash":"<hex>","hash":"<hex>","elided":true}.
// A verifier checks its link to the records around it (Verifier.AddElided)
// but cannot recompute its hash.
type Elided struct {
	Seq      uint64
	PrevHash Hash
	Hash     Hash
}

// Elide returns r's place in the chain, without its content.
func (r Record) Elide() Elided { return Elided{Seq: r.Seq, PrevHash: r.PrevHash, Hash: r.Hash} }

// Head returns the chain head this elided record makes.
func (e Elided) Head() Head { return Head{Seq: e.Seq, Hash: e.Hash} }

// AppendElidedJSON appends e's JSON (see Elided) to b.
func AppendElidedJSON(b []byte, e Elided) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"prev_hash":"`...)
	b, _ = e.PrevHash.AppendText(b)
	b = append(b, `","hash":"`...)
	b, _ = e.Hash.AppendText(b)
	return append(b, `","elided":true}`...)
}

// Line is one line of an NDJSON export: a full record, or an elided one
// (Elided set, Record zero).
type Line struct {
	Record Record
	Elided *Elided
}

// elidedKeys are the members of an elided record's JSON, every one
// required and no other allowed.
var elidedKeys = []string{"seq", "prev_hash", "hash", "elided"}

// ParseLine decodes one line of an export. A line whose "elided" member
// is true is an elided record and must have exactly the members seq,
// prev_hash, hash and elided (nothing unverifiable may ride along with
// it); any other line (no "elided", or false or null) is a full record,
// whose extra members, such as the store's source_position, are ignored
// as they are not covered by the hash. Member names match as
// encoding/json matches them: exactly, else ignoring case. A line that is
// not a JSON object, or an elided one with missing or extra members, is
// an error.
func ParseLine(b []byte) (Line, error) {
	b = bytes.TrimSpace(b)
	var probe struct {
		Elided *bool `json:"elided"`
	}
	if err := json.Unmarshal(b, &probe, jsonOptions); err != nil {
		return Line{}, fmt.Errorf("audit export: not a record: %w", err)
	}
	if probe.Elided == nil || !*probe.Elided {
		var r Record
		if err := json.Unmarshal(b, &r, jsonOptions); err != nil {
			return Line{}, fmt.Errorf("audit export: record: %w", err)
		}
		return Line{Record: r}, nil
	}
	var members map[string]jsontext.Value
	if err := json.Unmarshal(b, &members, jsonOptions); err != nil {
		return Line{}, fmt.Errorf("audit export: elided record: %w", err)
	}
	var e struct {
		Seq      *uint64 `json:"seq"`
		PrevHash *Hash   `json:"prev_hash"`
		Hash     *Hash   `json:"hash"`
	}
	if err := json.Unmarshal(b, &e, jsonOptions); err != nil {
		return Line{}, fmt.Errorf("audit export: elided record: %w", err)
	}
	known := 0
	for name := range members {
		if slices.ContainsFunc(elidedKeys, func(k string) bool { return strings.EqualFold(k, name) }) {
			known++
		}
	}
	if e.Seq == nil || e.PrevHash == nil || e.Hash == nil || known != len(members) || len(members) != len(elidedKeys) {
		return Line{}, fmt.Errorf("audit export: an elided record has exactly the members seq, prev_hash, hash and elided")
	}
	return Line{Elided: &Elided{Seq: *e.Seq, PrevHash: *e.PrevHash, Hash: *e.Hash}}, nil
}

// AddLine verifies the next line of an export: AddElided for an elided
// record, Add for a full one.
func (v *Verifier) AddLine(l Line) error {
	if l.Elided != nil {
		return v.AddElided(*l.Elided)
	}
	return v.Add(l.Record)
}
