package commands

import (
	"context"
	"errors"

	"github.com/cairnhq/cairn/domain"
)

// ChangeSettings sets run-time settings (superadmins only): every key
// given, all or nothing, in one append to the settings stream. A key set
// to its current value changes nothing.
type ChangeSettings struct {
	Actor Principal
	// Changes are the new values, as text (domain.SettingDef.Parse).
	Changes map[domain.SettingKey]string
}

func (ChangeSettings) CommandName() string { return "settings.change" }

type changeSettingsHandler struct {
	settings        settingsSource
	keypairPolicies repository[*domain.KeypairPolicy]
	clock
}

// newChangeSettingsHandler builds the handler over what it uses.
func newChangeSettingsHandler(settings settingsSource, keypairPolicies repository[*domain.KeypairPolicy], now clock) changeSettingsHandler {
	return changeSettingsHandler{settings: settings, keypairPolicies: keypairPolicies, clock: now}
}

// Handle decides the changes (domain.Settings.Change: every bad key
// reported at once), checks that a default keypair policy names a policy
// that exists, and appends one setting.changed per key that changes.
func (h changeSettingsHandler) Handle(ctx context.Context, md Metadata, cmd ChangeSettings) (Result, error) {
	const op = "settings.change"
	if err := authorizeGlobal(op, cmd.Actor); err != nil {
		return Result{}, err
	}
	// A default policy that does not exist is reported with the other
	// bad keys, so a request learns every problem at once.
	var missing error
	if name := cmd.Changes[domain.SettingKeypairDefaultPolicy]; name != "" && domain.CheckName(op, string(domain.SettingKeypairDefaultPolicy), name) == nil {
		missing = requirePolicy(ctx, h.keypairPolicies, op, string(domain.SettingKeypairDefaultPolicy), domain.KeypairPolicyStream(name), name)
		if missing != nil && !errors.Is(missing, domain.ErrInvalid) {
			return Result{}, missing
		}
	}
	at := h.now()
	_, pos, err := h.settings.repo.update(ctx, domain.SettingsStream(), md, func(s *domain.Settings) ([]domain.Event, error) {
		events, err := s.Change(cmd.Changes, h.settings.defaults, cmd.Actor.UserID.String(), at)
		if err != nil || missing != nil {
			return nil, errors.Join(err, missing)
		}
		return events, nil
	})
	return result(pos, err)
}
