package commandapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opChangeSettings = "settings.change"

// changeSettings handles PATCH /v1/settings (superadmins): the body maps
// setting keys to their new values (JSON numbers for sizes and durations,
// strings for names). Every key is changed or none: a body with any bad
// key is answered 400 naming each bad key, and nothing is written. Keys
// set to their current value change nothing. The answer waits (at most
// the server's max wait) until the read models reflect the change, so the
// very next request of any kind already runs with the new values.
func (a *api) changeSettings(c *fiber.Ctx) error {
	who, err := a.writing(c, opChangeSettings)
	if err != nil {
		return err
	}
	var body map[string]json.RawMessage
	if err := decodeBody(c, opChangeSettings, &body); err != nil {
		return err
	}
	changes, err := settingChanges(body)
	if err != nil {
		return err
	}
	res, err := a.Commands.ChangeSettings.Handle(c.UserContext(), metadata(c, who), commands.ChangeSettings{Actor: actor(who), Changes: changes})
	if err != nil {
		return err
	}
	a.settle(c, res.Position)
	return c.JSON(written{Position: res.Position})
}

// settingChanges reads each value as its key's kind wants it (a JSON
// integer, or a string). Every problem is reported at once, those of the
// values' JSON types with those of their contents.
func settingChanges(body map[string]json.RawMessage) (map[domain.SettingKey]string, error) {
	changes := make(map[domain.SettingKey]string, len(body))
	var errs []error
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		key := domain.SettingKey(k)
		def, ok := domain.LookupSetting(key)
		if !ok {
			changes[key] = "" // the command names it as unknown
			continue
		}
		raw := bytes.TrimSpace(body[k])
		if def.Kind.Integer() {
			var n json.Number
			if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
				errs = append(errs, domain.Invalid(opChangeSettings, k, "must be a JSON integer (%s)", def.Kind))
				continue
			}
			changes[key] = n.String()
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			errs = append(errs, domain.Invalid(opChangeSettings, k, "must be a JSON string"))
			continue
		}
		changes[key] = s
	}
	if len(errs) == 0 {
		return changes, nil
	}
	for _, k := range keys {
		key := domain.SettingKey(k)
		v, ok := changes[key]
		if !ok {
			continue
		}
		if def, known := domain.LookupSetting(key); !known {
			errs = append(errs, domain.Invalid(opChangeSettings, key.Field(), "no such setting"))
		} else if _, err := def.Parse(opChangeSettings, v); err != nil {
			errs = append(errs, err)
		}
	}
	return nil, errors.Join(errs...)
}
