package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Outcome is how a request ended.
type Outcome string

const (
	Success Outcome = "success" // the request did what was asked
	Failure Outcome = "error"   // it was allowed but failed (invalid input, conflict, internal error...)
	Denied  Outcome = "denied"  // authentication or authorization refused it
)

func (o Outcome) valid() bool { return o == Success || o == Failure || o == Denied }

// Hash is a SHA-256 digest; its text form is 64 lower-case hex digits.
type Hash [sha256.Size]byte

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// AppendText appends the text form to b (how records' JSON writes a hash,
// without an allocation).
func (h Hash) AppendText(b []byte) ([]byte, error) { return hex.AppendEncode(b, h[:]), nil }

func (h *Hash) UnmarshalText(b []byte) error {
	if len(b) != 2*sha256.Size {
		return fmt.Errorf("audit hash: want %d hex digits, got %d", 2*sha256.Size, len(b))
	}
	var out Hash
	if _, err := hex.Decode(out[:], b); err != nil {
		return fmt.Errorf("audit hash: %w", err)
	}
	*h = out
	return nil
}

// Record is one API request in the audit trail: who (user, access key,
// acting-as), what (action, entity), when, from where, how it ended and
// how long it took, and its place in the hash chain (Seq, PrevHash, Hash).
// Fields are covered by the hash in the encoding its Version names; a new
// field means a new encoding version (see the package documentation).
type Record struct {
	Version    int           `json:"v"`   // encoding version the Hash was computed with
	Seq        uint64        `json:"seq"` // 1 for the first record, dense
	Time       time.Time     `json:"time"`
	UserID     string        `json:"user_id,omitempty"`    // empty when the caller is not authenticated
	AccessKey  string        `json:"access_key,omitempty"` // the key the request claimed, even if refused
	ActingAs   string        `json:"acting_as,omitempty"`  // whose behalf an admin acted on (owner access key)
	Action     string        `json:"action"`               // e.g. "session.create", "GET /v1/sessions"
	EntityType string        `json:"entity_type,omitempty"`
	EntityID   string        `json:"entity_id,omitempty"`
	ClientIP   string        `json:"client_ip,omitempty"`
	Outcome    Outcome       `json:"outcome"`
	Status     int           `json:"status"` // HTTP status answered (0 if none was)
	Duration   time.Duration `json:"duration_ns"`
	RequestID  string        `json:"request_id,omitempty"`
	PrevHash   Hash          `json:"prev_hash"`
	Hash       Hash          `json:"hash"`
}

// Head is the end of a chain: the seq and hash of its last record.
// Genesis, the empty chain, is the zero Head. A head published or stored
// apart from the records (an anchor) lets Verify detect a truncated tail.
type Head struct {
	Seq  uint64 `json:"seq"`
	Hash Hash   `json:"hash"`
}

// Genesis is the head of the empty chain: the first record has Seq 1 and
// a zero PrevHash.
var Genesis = Head{}

// Head returns the chain head this record makes.
func (r Record) Head() Head { return Head{Seq: r.Seq, Hash: r.Hash} }

// ErrInvalidRecord: a record cannot be sealed (missing action or time,
// unknown outcome...). It names every problem.
var ErrInvalidRecord = errors.New("audit: invalid record")

// validate reports every problem of a record about to be sealed.
func (r Record) validate() error {
	var problems []string
	if r.Time.IsZero() || r.Time.Year() < 1 || r.Time.Year() > 9999 {
		problems = append(problems, "time must be set (years 1 to 9999)")
	}
	if r.Action == "" {
		problems = append(problems, "action is required")
	}
	if !r.Outcome.valid() {
		problems = append(problems, fmt.Sprintf("outcome %q is not success, error or denied", r.Outcome))
	}
	if r.Status < 0 || r.Status > 999 {
		problems = append(problems, fmt.Sprintf("status %d is not an HTTP status", r.Status))
	}
	if r.Duration < 0 {
		problems = append(problems, "duration is negative")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidRecord, strings.Join(problems, "; "))
	}
	return nil
}

// normalize puts a record in the form it has after a JSON round trip, so
// that its hash still verifies once stored and read back: time in UTC
// without monotonic reading, strings with every invalid UTF-8 byte replaced
// by U+FFFD (as encoding/json does).
func (r Record) normalize() Record {
	r.Time = r.Time.UTC().Round(0)
	for _, s := range r.strings() {
		*s = validUTF8(*s)
	}
	return r
}

// strings lists the record's string fields, in encoding order.
func (r *Record) strings() []*string {
	return []*string{(*string)(&r.Outcome), &r.Action, &r.EntityType, &r.EntityID,
		&r.UserID, &r.AccessKey, &r.ActingAs, &r.ClientIP, &r.RequestID}
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
