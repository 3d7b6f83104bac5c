package password

import (
	"crypto/rand"
	"crypto/subtle"

	"golang.org/x/crypto/argon2"
)

// New hashes password with fresh random salt under p and returns the PHC
// string to store.
func New(password string, p Params) (string, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	salt := make([]byte, p.SaltLength)
	rand.Read(salt) // never fails (crypto/rand, Go ≥ 1.24)
	return Hash{Params: p, Salt: salt, Key: derive(password, salt, p)}.String(), nil
}

func derive(password string, salt []byte, p Params) []byte {
	return argon2.IDKey([]byte(password), salt, p.Iterations, p.Memory, p.Parallelism, p.KeyLength)
}

// Verify reports whether password matches the stored PHC string, under
// the parameters recorded in that string. The keys are compared in
// constant time. An error means the stored string is unusable
// (ErrMalformedHash, ErrUnsupportedHash), never a wrong password.
func Verify(password, encoded string) (bool, error) {
	h, err := ParseHash(encoded)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(derive(password, h.Salt, h.Params), h.Key) == 1, nil
}

// VerifyMissing spends the time of a verification under p when there is
// no stored hash (an unknown email), so that a login's response time does
// not reveal which accounts exist. It always reports a mismatch.
func VerifyMissing(password string, p Params) bool {
	if p.Validate() != nil {
		p = DefaultParams()
	}
	salt := make([]byte, p.SaltLength)
	_ = derive(password, salt, p)
	return false
}

// NeedsRehash reports whether a stored hash should be replaced by one made
// with p at the next successful login: its parameters or sizes differ from
// p, or it cannot be read at all.
func NeedsRehash(encoded string, p Params) bool {
	h, err := ParseHash(encoded)
	if err != nil {
		return true
	}
	return h.Params != p
}
