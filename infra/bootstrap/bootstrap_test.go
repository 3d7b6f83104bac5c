package bootstrap

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnsureCreatesOnceAndKeeps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	c1, created, err := Ensure(dir, "http://127.0.0.1:1")
	if err != nil || !created {
		t.Fatalf("first Ensure: created=%v err=%v", created, err)
	}
	if len(c1.AccessKey) != 20 || len(c1.SecretKey) != 40 || c1.Token == "" || c1.Password == "" {
		t.Fatalf("credentials: %+v", c1)
	}
	st, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", st, err)
	}
	c2, created, err := Ensure(dir, "http://127.0.0.1:2")
	if err != nil || created {
		t.Fatalf("second Ensure: created=%v err=%v", created, err)
	}
	if c2.Token != c1.Token || c2.SecretKey != c1.SecretKey || c2.APIURL != "http://127.0.0.1:2" {
		t.Fatalf("second start must keep the credentials and refresh the URL: %+v", c2)
	}
	other, _, _ := Ensure(t.TempDir(), "")
	if other.Token == c1.Token {
		t.Fatal("tokens must be random")
	}
}

func TestLoadRejectsDamagedFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(`{"email":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Ensure(dir, ""); err == nil {
		t.Fatal("a damaged credentials file must be an error, not silently replaced")
	}
}
