package auditheads

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// keyPrefix starts the private key file's line.
const keyPrefix = "ed25519-private "

// maxKeyFile bounds what LoadKey reads: the line is about 60 bytes.
const maxKeyFile = 4096

// LoadKey reads the private key file at path. It refuses a file that
// others could read or that another user owns: whoever holds the key can
// sign any head.
func LoadKey(path string) (ed25519.PrivateKey, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("audit head key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("audit head key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("audit head key %s: not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("audit head key %s: mode %04o lets others read it; chmod 600 it (and consider the key exposed)", path, perm)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("audit head key %s: owned by uid %d, not by the running user (uid %d)", path, st.Uid, os.Getuid())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile))
	if err != nil {
		return nil, fmt.Errorf("audit head key: %w", err)
	}
	return ParseKey(data)
}

// ParseKey reads the private key file's content.
func ParseKey(data []byte) (ed25519.PrivateKey, error) {
	line := strings.TrimSpace(string(data))
	enc, ok := strings.CutPrefix(line, keyPrefix)
	if !ok || strings.ContainsAny(enc, " \n") {
		return nil, errors.New("audit head key: want one line \"ed25519-private <base64 seed>\"")
	}
	seed, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("audit head key: the seed is not the standard base64 of %d bytes", ed25519.SeedSize)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// WriteKey makes a new key and writes it to path with mode 0600; it
// refuses to overwrite a file (an existing key may still sign heads that
// matter).
func WriteKey(path string) (ed25519.PrivateKey, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("audit head key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit head key: %w", err)
	}
	line := keyPrefix + base64.StdEncoding.EncodeToString(key.Seed()) + "\n"
	_, err = f.WriteString(line)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("audit head key: %w", err)
	}
	return key, nil
}
