package eventstore

import "github.com/go-json-experiment/json/jsontext"

// validJSON reports whether data is one JSON value (with optional white
// space around it), as encoding/json.Valid does: strings' bytes are not
// checked for UTF-8 and repeated member names are allowed (jsontext checks
// both by default), with the same nesting limit of 10000. Every append
// validates its events' data this way.
func validJSON(data []byte) bool {
	return jsontext.Value(data).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}
