// Package settings is the read model of the run-time settings: every
// change (setting.changed of the settings stream) as one row of
// setting_changes, with the key, the old and new values, who changed it
// and when. A key's current value is its newest row; a key without rows
// takes its default, which the read model does not hold (the running
// server's start-up flags give it: domain.SettingDefaults). The history
// is paged newest first by log position.
package settings
