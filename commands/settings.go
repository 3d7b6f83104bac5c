package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// settingsSource reads the run-time settings from their stream, so that
// every handler (on any replica) sees the value the log holds, with the
// defaults the server started with (Options.Settings).
type settingsSource struct {
	repo     repository[*domain.Settings]
	defaults domain.SettingDefaults
}

// value is key's current value: the last one set, else its default.
func (s settingsSource) value(ctx context.Context, key domain.SettingKey) (string, error) {
	l, err := s.repo.load(ctx, domain.SettingsStream())
	if err != nil {
		return "", err
	}
	return l.agg.Value(key, s.defaults), nil
}
