package password

import (
	"errors"
	"fmt"
)

// Params are argon2id's cost parameters and the sizes of salt and key.
type Params struct {
	Memory      uint32 // KiB
	Iterations  uint32 // passes over memory (argon2's t)
	Parallelism uint8  // lanes (argon2's p)
	SaltLength  uint32 // bytes
	KeyLength   uint32 // bytes of derived key stored
}

// Bounds enforced on configured parameters and on parsed hashes alike (a
// stored hash with absurd costs is refused rather than run).
const (
	MaxMemory     = 1 << 20 // KiB: 1 GiB
	MaxIterations = 100
	MinSaltLength = 8
	MaxSaltLength = 64
	MinKeyLength  = 16
	MaxKeyLength  = 64
)

// DefaultParams are RFC 9106's second recommended option (section 4):
// 64 MiB, 3 passes, 4 lanes, 128-bit salt, 256-bit key — about a tenth of
// a second per hash on a server core.
func DefaultParams() Params {
	return Params{Memory: 64 * 1024, Iterations: 3, Parallelism: 4, SaltLength: 16, KeyLength: 32}
}

// CheapParams are for tests only: valid, and fast enough to hash
// thousands of passwords in a test run. Never use them in production.
func CheapParams() Params {
	return Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}
}

// Validate reports every parameter out of bounds at once.
func (p Params) Validate() error {
	var errs []error
	if p.Parallelism < 1 {
		errs = append(errs, errors.New("parallelism must be at least 1"))
	}
	lanes := max(uint32(p.Parallelism), 1)
	if p.Memory < 8*lanes || p.Memory > MaxMemory {
		errs = append(errs, fmt.Errorf("memory must be between 8 KiB per lane (%d) and %d KiB, not %d", 8*lanes, MaxMemory, p.Memory))
	}
	if p.Iterations < 1 || p.Iterations > MaxIterations {
		errs = append(errs, fmt.Errorf("iterations must be between 1 and %d, not %d", MaxIterations, p.Iterations))
	}
	if p.SaltLength < MinSaltLength || p.SaltLength > MaxSaltLength {
		errs = append(errs, fmt.Errorf("salt length must be between %d and %d bytes, not %d", MinSaltLength, MaxSaltLength, p.SaltLength))
	}
	if p.KeyLength < MinKeyLength || p.KeyLength > MaxKeyLength {
		errs = append(errs, fmt.Errorf("key length must be between %d and %d bytes, not %d", MinKeyLength, MaxKeyLength, p.KeyLength))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidParams, errors.Join(errs...))
	}
	return nil
}
