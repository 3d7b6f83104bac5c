package domain

import (
	"errors"
	"testing"
	"time"
)

func TestSettings(t *testing.T) {
	uploadSet := SettingChanged{Key: SettingVFolderMaxUpload, Old: "68719476736", New: "1024", Actor: "admin", At: at(1)}
	flags := SettingDefaults{SettingVFolderMaxUpload: "2048"}
	runCases(t, RehydrateSettings, []aggCase[*Settings]{
		{
			name: "a change from the built-in default records old and new",
			when: func(s *Settings) ([]Event, error) {
				return s.Change(map[SettingKey]string{SettingVFolderMaxUpload: "1024"}, nil, "admin", at(1))
			},
			then: []Event{uploadSet},
			check: func(t *testing.T, s *Settings) {
				if v, ok := s.Get(SettingVFolderMaxUpload); !ok || v.Value != "1024" || v.Actor != "admin" || !v.At.Equal(at(1)) {
					t.Fatalf("Get = %+v, %v", v, ok)
				}
				if got := s.Value(SettingVFolderMaxUpload, flags); got != "1024" {
					t.Fatalf("a set value lost to the flag: %q", got)
				}
			},
		},
		{
			name: "the old value is the flag's while nobody set it",
			when: func(s *Settings) ([]Event, error) {
				return s.Change(map[SettingKey]string{SettingVFolderMaxUpload: "1024"}, flags, "admin", at(1))
			},
			then: []Event{SettingChanged{Key: SettingVFolderMaxUpload, Old: "2048", New: "1024", Actor: "admin", At: at(1)}},
		},
		{
			name: "several keys: one event each, in key order, values canonical",
			when: func(s *Settings) ([]Event, error) {
				return s.Change(map[SettingKey]string{SettingSessionIdleTimeout: "0600", SettingKeypairDefaultPolicy: "default"}, nil, "admin", at(1))
			},
			then: []Event{
				SettingChanged{Key: SettingKeypairDefaultPolicy, Old: "", New: "default", Actor: "admin", At: at(1)},
				SettingChanged{Key: SettingSessionIdleTimeout, Old: "0", New: "600", Actor: "admin", At: at(1)},
			},
		},
		{
			name: "setting the current value is a no-op",
			when: func(s *Settings) ([]Event, error) {
				return s.Change(map[SettingKey]string{SettingVFolderMaxUpload: "2048"}, flags, "admin", at(1))
			},
		},
		{
			name:  "setting the value last set is a no-op, whatever the flag says",
			given: []Event{uploadSet},
			when: func(s *Settings) ([]Event, error) {
				return s.Change(map[SettingKey]string{SettingVFolderMaxUpload: "1024", SettingSessionIdleTimeout: "0"}, flags, "admin", at(2))
			},
		},
		{
			name:  "only the keys that change are recorded",
			given: []Event{uploadSet},
			when: func(s *Settings) ([]Event, error) {
				return s.Change(map[SettingKey]string{SettingVFolderMaxUpload: "1024", SettingSessionIdleTimeout: "60"}, nil, "root", at(2))
			},
			then: []Event{SettingChanged{Key: SettingSessionIdleTimeout, Old: "0", New: "60", Actor: "root", At: at(2)}},
		},
		{
			name: "every bad key at once, nothing changes",
			when: func(s *Settings) ([]Event, error) {
				return s.Change(map[SettingKey]string{
					SettingVFolderMaxUpload: "-1", SettingSessionIdleTimeout: "soon", SettingKeypairDefaultPolicy: "no spaces",
					"nope": "1",
				}, nil, "admin", at(1))
			},
			err:    ErrInvalid,
			fields: []string{string(SettingVFolderMaxUpload), string(SettingSessionIdleTimeout), string(SettingKeypairDefaultPolicy), "nope"},
		},
		{
			name: "one bad key refuses the good ones too",
			when: func(s *Settings) ([]Event, error) {
				return s.Change(map[SettingKey]string{SettingVFolderMaxUpload: "1024", SettingSessionIdleTimeout: "1e3"}, nil, "admin", at(1))
			},
			err: ErrInvalid, fields: []string{string(SettingSessionIdleTimeout)},
		},
		{
			name: "bounds",
			when: func(s *Settings) ([]Event, error) {
				return s.Change(map[SettingKey]string{SettingVFolderMaxUpload: "1125899906842625", SettingSessionIdleTimeout: "315360001"}, nil, "admin", at(1))
			},
			err: ErrInvalid, fields: []string{string(SettingVFolderMaxUpload), string(SettingSessionIdleTimeout)},
		},
		{
			name: "no change named, no actor, no time",
			when: func(s *Settings) ([]Event, error) { return s.Change(nil, nil, "", time.Time{}) },
			err:  ErrInvalid, fields: []string{"body", "actor", "at"},
		},
		{
			name:  "a policy name may be cleared",
			given: []Event{SettingChanged{Key: SettingKeypairDefaultPolicy, New: "default", Actor: "admin", At: at(1)}},
			when: func(s *Settings) ([]Event, error) {
				return s.Change(map[SettingKey]string{SettingKeypairDefaultPolicy: ""}, nil, "admin", at(2))
			},
			then: []Event{SettingChanged{Key: SettingKeypairDefaultPolicy, Old: "default", New: "", Actor: "admin", At: at(2)}},
		},
	})
}

func TestSettingsFoldRefusesForeignEvents(t *testing.T) {
	if _, err := RehydrateSettings(recorded([]Event{TokenRevoked{At: at(1)}})); !errors.Is(err, ErrInternal) {
		t.Fatalf("a token event folded into the settings: %v", err)
	}
}

func TestSettingDefaultsCheck(t *testing.T) {
	if err := (SettingDefaults{SettingVFolderMaxUpload: "0", SettingSessionIdleTimeout: "60"}).Check("op"); err != nil {
		t.Fatalf("valid defaults refused: %v", err)
	}
	err := SettingDefaults{SettingVFolderMaxUpload: "-1", SettingSessionIdleTimeout: "060", "nope": ""}.Check("op")
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad defaults: %v", err)
	}
	checkFields(t, err, []string{string(SettingVFolderMaxUpload), string(SettingSessionIdleTimeout), "nope"})
	if got := (SettingDefaults{}).Of(SettingVFolderMaxUpload); got != "68719476736" {
		t.Fatalf("built-in default %q", got)
	}
}

func TestSettingDefs(t *testing.T) {
	seen := map[SettingKey]bool{}
	for _, d := range SettingDefs() {
		if seen[d.Key] {
			t.Fatalf("%s listed twice", d.Key)
		}
		seen[d.Key] = true
		if v, err := d.Parse("op", d.Default); err != nil || v != d.Default {
			t.Errorf("%s: the built-in default %q is not a canonical value: %q, %v", d.Key, d.Default, v, err)
		}
		if d.Description == "" {
			t.Errorf("%s has no description", d.Key)
		}
	}
	if _, ok := LookupSetting("nope"); ok {
		t.Fatal("an unknown key was found")
	}
}
