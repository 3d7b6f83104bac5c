// Package bootstrap makes sure, at every start of `cairn dev`, that there
// is a superadmin to call the API with, and keeps its credentials in
// <data-dir>/credentials.json (mode 0600) for people and scripts.
//
// On the first start Provision creates, through the real commands (so
// every object is an event like any other), the default keypair, user and
// project policies, the domain "default" with its project "default", the
// resource group "default" (granted to the domain), the registered images
// (those found on the machine, with their labels, so that an image's
// ai.backend.service-ports label gives its service ports; then the local
// base image and the others named), the superadmin admin@cairn.local (a
// UUID, a random password, member of default/default), its main keypair
// and a bearer token. Later starts reuse the file when it still works:
// the user is an active superadmin, the keypair signs with the recorded
// secret, and the token is valid (a token that expired or was revoked is
// replaced; a stale or damaged file, or one from before tenancy, is
// provisioned anew, resetting the password of an existing
// admin@cairn.local). Every step tolerates what an earlier, interrupted
// start already did.
package bootstrap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FileName is the credentials file inside the data directory.
const FileName = "credentials.json"

// Credentials are what a newcomer needs to call the API.
type Credentials struct {
	APIURL        string `json:"api_url"`
	Email         string `json:"email"`
	Password      string `json:"password"`
	Token         string `json:"token"`
	AccessKey     string `json:"access_key"`
	SecretKey     string `json:"secret_key"`
	UserID        string `json:"user_id"`
	Domain        string `json:"domain"`
	Project       string `json:"project"`
	ResourceGroup string `json:"resource_group"`
}

// Validate reports a damaged file.
func (c Credentials) Validate() error {
	var errs []error
	for _, f := range []struct{ name, v string }{
		{"email", c.Email}, {"password", c.Password}, {"token", c.Token}, {"access_key", c.AccessKey}, {"secret_key", c.SecretKey},
		{"user_id", c.UserID}, {"domain", c.Domain}, {"project", c.Project}, {"resource_group", c.ResourceGroup},
	} {
		if f.v == "" {
			errs = append(errs, fmt.Errorf("%s is empty", f.name))
		}
	}
	return errors.Join(errs...)
}

// Load reads the credentials file of dataDir; fs.ErrNotExist when missing.
func Load(dataDir string) (Credentials, error) {
	raw, err := os.ReadFile(filepath.Join(dataDir, FileName))
	if err != nil {
		return Credentials{}, err
	}
	var c Credentials
	if err := json.Unmarshal(raw, &c); err != nil {
		return Credentials{}, fmt.Errorf("%s: %w", FileName, err)
	}
	if err := c.Validate(); err != nil {
		return Credentials{}, fmt.Errorf("%s: %w", FileName, err)
	}
	return c, nil
}

// loadIfAny is Load, with a missing file as no error and no credentials.
func loadIfAny(dataDir string) (Credentials, bool, error) {
	c, err := Load(dataDir)
	switch {
	case err == nil:
		return c, true, nil
	case errors.Is(err, fs.ErrNotExist):
		return Credentials{}, false, nil
	}
	return Credentials{}, false, err
}

// Save writes the file atomically with mode 0600.
func Save(dataDir string, c Credentials) error {
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	raw = append(raw, '\n')
	if old, err := os.ReadFile(filepath.Join(dataDir, FileName)); err == nil && bytes.Equal(old, raw) {
		return nil // unchanged: no write (a full disk would refuse it)
	}
	tmp, err := os.CreateTemp(dataDir, ".credentials-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dataDir, FileName))
}
