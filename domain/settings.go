package domain

import (
	"slices"
	"strconv"
	"time"
)

// SettingKey names one run-time setting: a value an admin may change while
// the cluster runs, each change an event of the settings stream.
type SettingKey string

// The run-time settings. The list is fixed: a key no SettingDef describes
// is refused.
const (
	// SettingVFolderMaxUpload bounds one uploaded file in bytes, whatever
	// the quotas allow (0: only the quotas).
	SettingVFolderMaxUpload SettingKey = "vfolder.max_upload_size"
	// SettingKeypairDefaultPolicy is the keypair resource policy a new
	// keypair gets when its request names none ("": a request must name
	// one).
	SettingKeypairDefaultPolicy SettingKey = "keypair.default_resource_policy"
	// SettingSessionIdleTimeout is the idle timeout in seconds of
	// interactive sessions whose keypair policy sets none (its
	// idle_timeout is 0); 0: such sessions are never ended for idleness.
	SettingSessionIdleTimeout SettingKey = "session.default_idle_timeout"
)

// Field is how an error names the key: the key itself, or "(empty key)".
func (k SettingKey) Field() string {
	if k == "" {
		return "(empty key)"
	}
	return string(k)
}

// SettingKind says what a setting's value is, and so how its text is
// read and shown.
type SettingKind string

const (
	// SettingBytes is a size in bytes, a non-negative integer.
	SettingBytes SettingKind = "bytes"
	// SettingSeconds is a duration in whole seconds, a non-negative
	// integer.
	SettingSeconds SettingKind = "seconds"
	// SettingName is an object's name, or "" for none.
	SettingName SettingKind = "name"
)

// Integer reports whether values of kind k are integers.
func (k SettingKind) Integer() bool { return k == SettingBytes || k == SettingSeconds }

// maxSettingBytes bounds size settings: 1 PiB.
const maxSettingBytes = 1 << 50

// SettingDef describes one setting: its kind, its built-in default and
// the `cairn dev` flag that may seed it at start-up ("" for none). Values
// are held as text in a canonical form (decimal integers, names as they
// are), so that an event stores exactly what was decided.
type SettingDef struct {
	Key         SettingKey  `json:"key"`
	Kind        SettingKind `json:"kind"`
	Default     string      `json:"default"`
	Flag        string      `json:"flag"`
	Description string      `json:"description"`
}

// settingDefs is the fixed list of settings, in the order they are shown.
var settingDefs = []SettingDef{
	{Key: SettingVFolderMaxUpload, Kind: SettingBytes, Default: strconv.FormatInt(64<<30, 10), Flag: "vfolder-max-upload",
		Description: "largest file one upload may write, in bytes, whatever the quotas allow (0: only the quotas)"},
	{Key: SettingKeypairDefaultPolicy, Kind: SettingName, Default: "",
		Description: "keypair resource policy of a new keypair whose request names none (empty: a request must name one)"},
	{Key: SettingSessionIdleTimeout, Kind: SettingSeconds, Default: "0",
		Description: "idle timeout in seconds of interactive sessions whose keypair policy sets none (0: none)"},
}

// SettingDefs returns every setting's description, in display order.
func SettingDefs() []SettingDef { return slices.Clone(settingDefs) }

// LookupSetting returns the description of key.
func LookupSetting(key SettingKey) (SettingDef, bool) {
	i := slices.IndexFunc(settingDefs, func(d SettingDef) bool { return d.Key == key })
	if i < 0 {
		return SettingDef{}, false
	}
	return settingDefs[i], true
}

// Parse checks a value of the setting and returns it in canonical form;
// a bad value is KindInvalid naming the key as the field.
func (d SettingDef) Parse(op, value string) (string, error) {
	p := &problems{op: op}
	v := d.parse(p, value)
	return v, p.err()
}

func (d SettingDef) parse(p *problems, value string) string {
	field := string(d.Key)
	switch d.Kind {
	case SettingBytes, SettingSeconds:
		n, err := strconv.ParseInt(value, 10, 64)
		hi := int64(maxSettingBytes)
		if d.Kind == SettingSeconds {
			hi = maxTimeoutSeconds
		}
		if err != nil || n < 0 || n > hi {
			p.bad(field, "must be an integer between 0 and %d, not %q", hi, value)
			return ""
		}
		return strconv.FormatInt(n, 10)
	case SettingName:
		p.checkOptionalName(field, value)
		return value
	}
	p.bad(field, "setting of unknown kind %q", d.Kind)
	return ""
}

// Int reads an integer setting's canonical value (0 if it is not one).
func (d SettingDef) Int(value string) int64 {
	if !d.Kind.Integer() {
		return 0
	}
	n, _ := strconv.ParseInt(value, 10, 64)
	return n
}

// SettingDefaults are the values settings take until an admin sets them:
// a start-up flag's value where one was given, the built-in default
// otherwise (a key missing from the map).
type SettingDefaults map[SettingKey]string

// Of returns the default of key.
func (ds SettingDefaults) Of(key SettingKey) string {
	if v, ok := ds[key]; ok {
		return v
	}
	d, _ := LookupSetting(key)
	return d.Default
}

// Check reports every default that is not a valid value of its key (or
// whose key is unknown) at once.
func (ds SettingDefaults) Check(op string) error {
	p := &problems{op: op}
	for _, k := range sortedKeys(ds) {
		d, ok := LookupSetting(k)
		if !ok {
			p.bad(k.Field(), "no such setting")
			continue
		}
		before := len(p.errs)
		if v := d.parse(p, ds[k]); len(p.errs) == before && v != ds[k] {
			p.bad(string(k), "must be written %q, not %q", v, ds[k])
		}
	}
	return p.err()
}

// SettingValue is the last change of a setting the log holds.
type SettingValue struct {
	Value string
	Actor string
	At    time.Time
}

// Settings is the run-time settings aggregate (the stream "settings"): the
// value admins last gave each key. A key nobody set takes its default,
// which is not part of the aggregate (it comes from the running server's
// start-up flags): once an admin sets a value, the event wins over any
// flag. The zero revision is -1 (no stream yet); the aggregate always
// exists.
type Settings struct {
	revision int64
	set      map[SettingKey]SettingValue
}

// RehydrateSettings folds the settings stream's events.
func RehydrateSettings(events []RecordedEvent) (*Settings, error) {
	s := &Settings{revision: -1, set: map[SettingKey]SettingValue{}}
	if err := fold("settings.rehydrate", events, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Revision is the revision of the last event folded, -1 for none.
func (s *Settings) Revision() int64 { return s.revision }

func (s *Settings) setRevision(r int64) { s.revision = r }

func (s *Settings) apply(ev Event) error {
	e, ok := ev.(SettingChanged)
	if !ok {
		return foreignEvent(ev, "settings")
	}
	s.set[e.Key] = SettingValue{Value: e.New, Actor: e.Actor, At: e.At}
	return nil
}

// Get returns the value admins last set for key, and false when nobody
// did (the key takes its default).
func (s *Settings) Get(key SettingKey) (SettingValue, bool) {
	v, ok := s.set[key]
	return v, ok
}

// Value is key's current value: the last one set, else its default.
func (s *Settings) Value(key SettingKey, defaults SettingDefaults) string {
	if v, ok := s.set[key]; ok {
		return v.Value
	}
	return defaults.Of(key)
}

// Change sets the values of changes (text, as SettingDef.Parse reads it)
// for actor at at: one setting.changed per key whose value differs from
// its current one (the last set, else its default), in key order; a key
// set to its current value changes nothing. Every unknown key and every
// bad value is reported at once (each KindInvalid naming its key), and
// then nothing changes.
func (s *Settings) Change(changes map[SettingKey]string, defaults SettingDefaults, actor string, at time.Time) ([]Event, error) {
	const op = "settings.change"
	p := &problems{op: op}
	if len(changes) == 0 {
		p.bad("body", "name at least one setting to change")
	}
	if actor == "" {
		p.bad("actor", "required")
	}
	p.checkAt(at)
	next := make(map[SettingKey]string, len(changes))
	for _, k := range sortedKeys(changes) {
		d, ok := LookupSetting(k)
		if !ok {
			p.bad(k.Field(), "no such setting")
			continue
		}
		next[k] = d.parse(p, changes[k])
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	var out []Event
	for _, k := range sortedKeys(next) {
		old := s.Value(k, defaults)
		if next[k] == old {
			continue
		}
		out = append(out, SettingChanged{Key: k, Old: old, New: next[k], Actor: actor, At: at})
	}
	return out, nil
}

func sortedKeys[V any](m map[SettingKey]V) []SettingKey {
	keys := make([]SettingKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
