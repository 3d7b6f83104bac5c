package domain

import "time"

// TypeSettingChanged is the wire name of a run-time setting's change
// (stream "settings").
const TypeSettingChanged = "setting.changed"

// SettingChanged: an admin set the run-time setting Key from Old to New
// (both in the key's canonical text form, see SettingDef). One change
// request appends one event per key it changes, all in one append.
type SettingChanged struct {
	Key   SettingKey `json:"key"`
	Old   string     `json:"old"`
	New   string     `json:"new"`
	Actor string     `json:"actor"`
	At    time.Time  `json:"at"`
}

func (SettingChanged) EventType() string { return TypeSettingChanged }
