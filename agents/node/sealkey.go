package node

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/nats-io/nkeys"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/infra/bus/busauth"
)

// sealKeyFile holds, in the data directory, the seed of the key the
// manager seals the agent's messages to (mode 0600).
const sealKeyFile = "seal.nk"

// loadSealKey reads the agent's sealing key, making it on first start. It
// stays across restarts so that messages sealed before a restart still
// open; a new one (a wiped data directory) is announced at the next
// agent.register, and messages sealed to the old one are dropped.
func loadSealKey(dataDir string) (nkeys.KeyPair, string, error) {
	path := filepath.Join(dataDir, sealKeyFile)
	seed, err := busauth.ReadSecretFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		kp, err := protocol.NewSealKey()
		if err != nil {
			return nil, "", err
		}
		if seed, err = kp.Seed(); err != nil {
			return nil, "", err
		}
		if err := busauth.WriteSecretFile(path, seed); err != nil {
			return nil, "", fmt.Errorf("agent: seal key: %w", err)
		}
	case err != nil:
		return nil, "", fmt.Errorf("agent: seal key: %w", err)
	}
	kp, err := nkeys.FromCurveSeed(seed)
	if err != nil {
		return nil, "", fmt.Errorf("agent: seal key %s: %w", path, err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, "", err
	}
	return kp, pub, nil
}
