package localfs

import (
	"log/slog"
	"testing"

	"github.com/cairnhq/cairn/infra/vfstorage/storagetest"
)

func openTest(t testing.TB, cfg Config) *Storage {
	t.Helper()
	s, err := Open(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storagetest.Harness {
		s := openTest(t, Config{Hosts: Hosts{{"a", t.TempDir()}, {"b", t.TempDir()}}})
		return storagetest.Harness{Storage: s, Host: "a", OtherHost: "b"}
	})
}
