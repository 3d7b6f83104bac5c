package busauth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nkeys"
)

// Keys are one installation's signing keys. Their seeds are secrets: whoever
// holds the account seed can issue credentials for any agent.
type Keys struct {
	Operator nkeys.KeyPair
	System   nkeys.KeyPair
	Account  nkeys.KeyPair
}

// Names of the seed files in a keys directory.
const (
	operatorSeedFile = "operator.nk"
	systemSeedFile   = "system-account.nk"
	accountSeedFile  = "account.nk"
)

// LoadOrCreateKeys reads the keys kept in dir, creating the directory (mode
// 0700) and any missing key (files of mode 0600) first. A seed file that
// others may read, or that holds a key of the wrong kind, is refused: the
// keys would no longer be secret, or not what they claim.
func LoadOrCreateKeys(dir string) (*Keys, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("busauth: keys directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("busauth: keys directory: %w", err)
	}
	var k Keys
	var err error
	if k.Operator, err = loadOrCreate(filepath.Join(dir, operatorSeedFile), nkeys.PrefixByteOperator); err != nil {
		return nil, err
	}
	if k.System, err = loadOrCreate(filepath.Join(dir, systemSeedFile), nkeys.PrefixByteAccount); err != nil {
		return nil, err
	}
	if k.Account, err = loadOrCreate(filepath.Join(dir, accountSeedFile), nkeys.PrefixByteAccount); err != nil {
		return nil, err
	}
	return &k, nil
}

func loadOrCreate(path string, kind nkeys.PrefixByte) (nkeys.KeyPair, error) {
	seed, err := ReadSecretFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		kp, err := nkeys.CreatePair(kind)
		if err != nil {
			return nil, fmt.Errorf("busauth: create %s key: %w", kind, err)
		}
		seed, err := kp.Seed()
		if err != nil {
			return nil, err
		}
		if err := WriteSecretFile(path, seed); err != nil {
			return nil, err
		}
		return kp, nil
	case err != nil:
		return nil, err
	}
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return nil, fmt.Errorf("busauth: %s: not an nkey seed: %w", path, err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, err
	}
	if !nkeys.IsValidPublicKey(pub) || nkeys.Prefix(pub) != kind {
		return nil, fmt.Errorf("busauth: %s holds a %s key, want %s", path, nkeys.Prefix(pub), kind)
	}
	return kp, nil
}

// ReadSecretFile reads a file that must be readable by its owner only
// (no permission bits for group or others).
func ReadSecretFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("busauth: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("busauth: %s has mode %04o: a secret must not be readable by group or others (chmod 600)", path, perm)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("busauth: %w", err)
	}
	return b, nil
}

// WriteSecretFile writes data to path atomically with mode 0600.
func WriteSecretFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("busauth: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("busauth: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("busauth: write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("busauth: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("busauth: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("busauth: %w", err)
	}
	return nil
}

// EnsureCredentials returns path after making sure it holds credentials:
// when the file does not exist, issue makes them and they are written
// (mode 0600). Existing credentials are kept, so that a process keeps its
// identity across restarts.
func EnsureCredentials(path string, issue func() ([]byte, error)) (string, error) {
	_, err := ReadSecretFile(path)
	if err == nil {
		return path, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	creds, err := issue()
	if err != nil {
		return "", err
	}
	return path, WriteSecretFile(path, creds)
}
