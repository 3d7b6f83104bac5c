package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// RotateKeypairSecret replaces a keypair's secret key with a fresh one;
// the old one stops working at once. Its owner (role user) may rotate its
// own keypairs.
type RotateKeypairSecret struct {
	Actor     Principal
	AccessKey string
}

func (RotateKeypairSecret) CommandName() string { return "keypair.rotate-secret" }

// RotateKeypairSecretResult carries the new secret key, shown this once.
type RotateKeypairSecretResult struct {
	SecretKey string
	Position  uint64
}

type rotateKeypairSecretHandler struct {
	keypairLookup
	clock
}

// newRotateKeypairSecretHandler builds the handler over what it uses.
func newRotateKeypairSecretHandler(keypairLookup keypairLookup, now clock) rotateKeypairSecretHandler {
	return rotateKeypairSecretHandler{keypairLookup: keypairLookup, clock: now}
}

// Handle generates a secret (crypto/rand) and records it
// (domain.Keypair.RotateSecret).
func (h rotateKeypairSecretHandler) Handle(ctx context.Context, md Metadata, cmd RotateKeypairSecret) (RotateKeypairSecretResult, error) {
	const op = "keypair.rotate-secret"
	if _, _, err := h.keypairOf(ctx, op, cmd.Actor, cmd.AccessKey, true); err != nil {
		return RotateKeypairSecretResult{}, err
	}
	secret, err := newSecretKey()
	if err != nil {
		return RotateKeypairSecretResult{}, keyError(op, err)
	}
	at := h.now()
	_, pos, err := h.keypairs.update(ctx, domain.KeypairStream(cmd.AccessKey), md, func(k *domain.Keypair) ([]domain.Event, error) {
		return k.RotateSecret(secret, at)
	})
	if err != nil {
		return RotateKeypairSecretResult{}, err
	}
	return RotateKeypairSecretResult{SecretKey: secret, Position: pos}, nil
}
