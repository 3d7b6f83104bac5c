package settings_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/settings"
)

var (
	ctx  = context.Background()
	root = commands.Principal{UserID: uuid.UUID{0x01, 0x95, 15: 0x10}, Role: domain.RoleSuperadmin, Domain: "default"}
)

// change sets values through the command and returns its position.
func change(t *testing.T, h *commands.Handlers, values map[domain.SettingKey]string) uint64 {
	t.Helper()
	res, err := h.ChangeSettings.Handle(ctx, projectiontest.MD, commands.ChangeSettings{Actor: root, Changes: values})
	if err != nil {
		t.Fatal(err)
	}
	return res.Position
}

// TestSettingsReadModel: the latest change per key, the value with its
// default, and the history paged newest first, on both backends.
func TestSettingsReadModel(t *testing.T) {
	t.Parallel()
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		rm := settings.New(b.DB)
		r := projectiontest.Start(t, b.DB, b, rm, projections.Options{BatchSize: 2})
		h := projectiontest.Handlers(t, b)
		defaults := domain.SettingDefaults{domain.SettingVFolderMaxUpload: "4096"}
		select { // its tables exist once it caught up with the empty log
		case <-r.CaughtUp():
		case err := <-r.Done():
			t.Fatalf("projector: %v", err)
		}

		if v, err := rm.Value(ctx, domain.SettingVFolderMaxUpload, defaults); err != nil || v != "4096" {
			t.Fatalf("unset value = %q, %v; want the default", v, err)
		}
		change(t, h, map[domain.SettingKey]string{domain.SettingVFolderMaxUpload: "1024", domain.SettingSessionIdleTimeout: "60"})
		change(t, h, map[domain.SettingKey]string{domain.SettingVFolderMaxUpload: "2048"})
		last := change(t, h, map[domain.SettingKey]string{domain.SettingVFolderMaxUpload: "0"})
		r.WaitFor(t, last)

		if v, err := rm.Value(ctx, domain.SettingVFolderMaxUpload, defaults); err != nil || v != "0" {
			t.Fatalf("value = %q, %v", v, err)
		}
		latest, err := rm.Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		up := latest[domain.SettingVFolderMaxUpload]
		if len(latest) != 2 || up.Old != "2048" || up.New != "0" || up.Actor != root.UserID.String() || up.Position != last || up.At.IsZero() {
			t.Fatalf("latest = %+v", latest)
		}
		if idle := latest[domain.SettingSessionIdleTimeout]; idle.Old != "0" || idle.New != "60" {
			t.Fatalf("idle = %+v", idle)
		}

		// Every key, two per page, newest first.
		var seen []string
		var cursor uint64
		for pages := 0; ; pages++ {
			p, err := rm.History(ctx, "", cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Changes {
				seen = append(seen, string(c.Key)+"="+c.New)
			}
			if p.Next == 0 {
				if pages != 1 {
					t.Fatalf("%d pages, want 2", pages+1)
				}
				break
			}
			cursor = p.Next
		}
		want := []string{"vfolder.max_upload_size=0", "vfolder.max_upload_size=2048", "vfolder.max_upload_size=1024", "session.default_idle_timeout=60"}
		if len(seen) != len(want) {
			t.Fatalf("history %v, want %v", seen, want)
		}
		for i := range want {
			if seen[i] != want[i] {
				t.Fatalf("history %v, want %v", seen, want)
			}
		}
		// One key.
		p, err := rm.History(ctx, domain.SettingSessionIdleTimeout, 0, 10)
		if err != nil || len(p.Changes) != 1 || p.Next != 0 {
			t.Fatalf("%+v %v", p, err)
		}
		if _, err := rm.History(ctx, "", 0, settings.MaxLimit+1); err == nil {
			t.Fatal("a page over the limit was served")
		}
	})
}
