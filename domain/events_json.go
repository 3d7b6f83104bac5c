package domain

import (
	"github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// jsonOptions are the options every event payload is encoded and decoded
// with (go-json-experiment/json, the encoding/json/v2 proposal): the
// semantics of encoding/json (v1), which wrote every stored event, so the
// bytes written are the ones it wrote (nil slices and maps as null, map
// keys sorted, omitempty as v1 defines it, HTML characters and invalid
// UTF-8 escaped alike, durations as nanoseconds) and what it read still
// reads the same (names matched without regard to case, the last of
// repeated names kept). Errors are v2's: v1's wording would make every
// decode validate its input in a pass of its own first.
var jsonOptions = json.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv1.ReportErrorsWithLegacySemantics(false))

// MarshalEvent returns e's JSON encoding: the bytes encoding/json's
// Marshal writes for it (invalid UTF-8 aside: both write U+FFFD for it,
// encoding/json as the escape \ufffd, this as the character itself).
func MarshalEvent(e Event) ([]byte, error) {
	b, err := json.Marshal(e, jsonOptions)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// unmarshalEvent decodes a stored payload into e as encoding/json's
// Unmarshal does (errors aside: see jsonOptions).
func unmarshalEvent(data []byte, e any) error {
	return json.Unmarshal(data, e, jsonOptions)
}
