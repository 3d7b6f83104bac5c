// Package bootstrap creates, on the first start of `cairn dev`, the
// credentials of the superadmin and of the default domain, project,
// resource group and keypair, and keeps them in <data-dir>/credentials.json
// (mode 0600) so scripts can read them. Later starts reuse the file.
package bootstrap

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
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
	for name, v := range map[string]string{"email": c.Email, "password": c.Password, "token": c.Token, "access_key": c.AccessKey, "secret_key": c.SecretKey, "user_id": c.UserID, "domain": c.Domain, "project": c.Project, "resource_group": c.ResourceGroup} {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is empty", name))
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

// Ensure loads the credentials of dataDir, or creates and saves fresh ones
// (created = true). apiURL is refreshed on every start.
func Ensure(dataDir, apiURL string) (c Credentials, created bool, err error) {
	c, err = Load(dataDir)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		c, err = generate()
		if err != nil {
			return Credentials{}, false, err
		}
		created = true
	default:
		return Credentials{}, false, err
	}
	c.APIURL = apiURL
	return c, created, Save(dataDir, c)
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
	tmp, err := os.CreateTemp(dataDir, ".credentials-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
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

const (
	upper    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	alphanum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
)

func generate() (Credentials, error) {
	var c Credentials
	var err error
	fields := []struct {
		dst      *string
		prefix   string
		alphabet string
		n        int
	}{
		{&c.Password, "", alphanum, 20},
		{&c.Token, "cairn_", alphanum, 40},
		{&c.AccessKey, "AKCAIRN", upper, 13}, // 20 characters, Backend.AI style
		{&c.SecretKey, "", alphanum, 40},
	}
	for _, f := range fields {
		s, e := randomString(f.alphabet, f.n)
		if e != nil {
			return Credentials{}, e
		}
		*f.dst = f.prefix + s
	}
	c.Email = "admin@cairn.local"
	c.UserID = "admin"
	c.Domain = "default"
	c.Project = "default"
	c.ResourceGroup = "default"
	return c, err
}

func randomString(alphabet string, n int) (string, error) {
	out := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range out {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		out[i] = alphabet[k.Int64()]
	}
	return string(out), nil
}
