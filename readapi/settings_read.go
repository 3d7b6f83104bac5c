package readapi

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/settings"
)

const (
	opListSettings   = "settings.list"
	opSettingHistory = "settings.history"
	// defaultHistoryLimit is a history page's size without ?limit=.
	defaultHistoryLimit = 50
)

// SettingsDeps serve the run-time settings: the read model of their
// changes and the defaults the server started with (its flags). Without a
// read model the settings routes are not mounted.
type SettingsDeps struct {
	Changes  *settings.ReadModel
	Defaults domain.SettingDefaults
}

// Value is key's current value as its text: the last one an admin set
// (as far as the read model has folded), else its default. The running
// server reads settings through it, so that every replica uses what the
// log holds.
func (d SettingsDeps) Value(ctx context.Context, key domain.SettingKey) (string, error) {
	return d.Changes.Value(ctx, key, d.Defaults)
}

// Int is the current value of an integer setting (sizes, durations).
func (d SettingsDeps) Int(ctx context.Context, key domain.SettingKey) (int64, error) {
	v, err := d.Value(ctx, key)
	if err != nil {
		return 0, err
	}
	def, _ := domain.LookupSetting(key)
	return def.Int(v), nil
}

// settingView is one setting in GET /v1/settings: its value and default
// (JSON numbers for sizes and durations, strings for names), the start-up
// flag that seeds the default ("" when none does), and, once an admin set
// it, who did (a user id) and when, at which log position.
type settingView struct {
	Key         domain.SettingKey  `json:"key"`
	Kind        domain.SettingKind `json:"kind"`
	Description string             `json:"description"`
	Value       any                `json:"value"`
	Default     any                `json:"default"`
	Flag        string             `json:"flag"`
	Set         bool               `json:"set"`
	ChangedBy   *string            `json:"changed_by"`
	ChangedAt   *time.Time         `json:"changed_at"`
	Position    *uint64            `json:"position"`
}

// settingChangeView is one change in GET /v1/settings/history.
type settingChangeView struct {
	Position uint64            `json:"position"`
	Key      domain.SettingKey `json:"key"`
	Old      any               `json:"old"`
	New      any               `json:"new"`
	Actor    string            `json:"actor"`
	At       time.Time         `json:"at"`
}

type settingHistoryResponse struct {
	Items      []settingChangeView `json:"items"`
	NextCursor *string             `json:"next_cursor"`
}

// jsonValue is a setting's text as it is shown: a number for integer
// kinds, the text otherwise.
func jsonValue(d domain.SettingDef, v string) any {
	if d.Kind.Integer() {
		return d.Int(v)
	}
	return v
}

// mayReadSettings lets superadmins read the settings. They are
// cluster-wide and their history names the superadmins who changed them,
// so domain admins, monitors and users are refused (403), as for the
// audit trail.
func mayReadSettings(who caller, op string) error {
	if !who.IsSuperadmin() {
		return domain.Errorf(op, domain.KindForbidden, "reading the run-time settings needs the superadmin role")
	}
	return nil
}

func (a *api) mountSettings(v1 fiber.Router) {
	if a.Settings.Changes == nil {
		return
	}
	v1.Get("/settings", a.listSettings)
	v1.Get("/settings/history", a.settingHistory)
}

// listSettings handles GET /v1/settings: every setting, in a fixed order.
func (a *api) listSettings(c *fiber.Ctx) error {
	who, err := a.Reading(c, opListSettings)
	if err != nil {
		return err
	}
	if err := mayReadSettings(who, opListSettings); err != nil {
		return err
	}
	latest, err := a.Settings.Changes.Latest(c.UserContext())
	if err != nil {
		return err
	}
	defs := domain.SettingDefs()
	out := make([]settingView, len(defs))
	for i, d := range defs {
		def := a.Settings.Defaults.Of(d.Key)
		v := settingView{Key: d.Key, Kind: d.Kind, Description: d.Description, Value: jsonValue(d, def),
			Default: jsonValue(d, def), Flag: d.Flag}
		if ch, ok := latest[d.Key]; ok {
			v.Set, v.Value = true, jsonValue(d, ch.New)
			v.ChangedBy, v.ChangedAt, v.Position = &ch.Actor, &ch.At, &ch.Position
		}
		out[i] = v
	}
	return c.JSON(items[settingView]{Items: out})
}

// settingHistory handles GET /v1/settings/history?key=&cursor=&limit=:
// the changes (of one key, or of all), newest first, limit per page
// (default 50, at most 1000); next_cursor is null on the last page.
func (a *api) settingHistory(c *fiber.Ctx) error {
	const op = opSettingHistory
	who, err := a.Reading(c, op)
	if err != nil {
		return err
	}
	if err := mayReadSettings(who, op); err != nil {
		return err
	}
	key := domain.SettingKey(strings.Clone(c.Query("key")))
	if _, ok := domain.LookupSetting(key); key != "" && !ok {
		return domain.Invalid(op, "key", "no such setting %q", key)
	}
	var cursor uint64
	if raw := c.Query("cursor"); raw != "" {
		if cursor, err = strconv.ParseUint(raw, 10, 64); err != nil || cursor == 0 {
			return domain.Invalid(op, "cursor", "is not a cursor of this list")
		}
	}
	limit, err := QueryInt(c, op, "limit", defaultHistoryLimit, 1, settings.MaxLimit)
	if err != nil {
		return err
	}
	page, err := a.Settings.Changes.History(c.UserContext(), key, cursor, limit)
	if err != nil {
		return err
	}
	out := settingHistoryResponse{Items: make([]settingChangeView, len(page.Changes))}
	for i, ch := range page.Changes {
		d, _ := domain.LookupSetting(ch.Key)
		out.Items[i] = settingChangeView{Position: ch.Position, Key: ch.Key, Old: jsonValue(d, ch.Old), New: jsonValue(d, ch.New),
			Actor: ch.Actor, At: ch.At}
	}
	if page.Next != 0 {
		next := strconv.FormatUint(page.Next, 10)
		out.NextCursor = &next
	}
	return c.JSON(out)
}
