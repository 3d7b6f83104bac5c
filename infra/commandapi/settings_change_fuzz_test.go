package commandapi

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// FuzzSettingChanges: whatever the body of PATCH /v1/settings, reading it
// and deciding on it never panics; a refusal is KindInvalid with every
// problem naming its field; what is accepted is recorded in canonical
// form.
func FuzzSettingChanges(f *testing.F) {
	for _, seed := range []string{
		`{"vfolder.max_upload_size":1024}`,
		`{"vfolder.max_upload_size":"1024","session.default_idle_timeout":1.5,"keypair.default_resource_policy":7}`,
		`{"keypair.default_resource_policy":"default","session.default_idle_timeout":-0}`,
		`{"vfolder.max_upload_size":1e3,"colour":"blue","":null}`,
		`{"session.default_idle_timeout":00012}`, `{}`, `[]`, `null`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	settings, err := domain.RehydrateSettings(nil)
	if err != nil {
		f.Fatal(err)
	}
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		var m map[string]json.RawMessage
		err := httpapi.DecodeJSON(body, &m)
		var events []domain.Event
		if err == nil {
			var changes map[domain.SettingKey]string
			if changes, err = settingChanges(m); err == nil {
				events, err = settings.Change(changes, nil, "admin", at)
			}
		}
		if err != nil {
			checkInvalidFields(t, body, err)
			return
		}
		for _, ev := range events {
			e := ev.(domain.SettingChanged)
			def, ok := domain.LookupSetting(e.Key)
			if !ok {
				t.Fatalf("%q: unknown key %q accepted", body, e.Key)
			}
			if v, err := def.Parse("fuzz", e.New); err != nil || v != e.New {
				t.Fatalf("%q: %s recorded as %q, not canonical (%q, %v)", body, e.Key, e.New, v, err)
			}
		}
	})
}

// checkInvalidFields fails unless err is KindInvalid and each of its
// problems names a field.
func checkInvalidFields(t *testing.T, body []byte, err error) {
	t.Helper()
	if !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("%q: not invalid: %v", body, err)
	}
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range multi.Unwrap() {
			checkInvalidFields(t, body, e)
		}
		return
	}
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid || de.Field == "" {
		t.Fatalf("%q: a problem without a field: %v", body, err)
	}
}
