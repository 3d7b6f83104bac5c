package password

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Version is the argon2 version Cairn writes and reads (0x13).
const Version = 19

// Errors, matched with errors.Is.
var (
	// ErrMalformedHash: the stored string is not a PHC argon2id hash
	// Cairn can read.
	ErrMalformedHash = errors.New("password: malformed hash")
	// ErrUnsupportedHash: a well-formed PHC string of another algorithm or
	// argon2 version.
	ErrUnsupportedHash = errors.New("password: unsupported hash")
	// ErrInvalidParams: parameters out of bounds (see Params.Validate).
	ErrInvalidParams = errors.New("password: invalid parameters")
)

// Hash is a decoded PHC string:
//
//	$argon2id$v=19$m=<KiB>,t=<iterations>,p=<lanes>$<salt>$<key>
//
// salt and key in standard base64 without padding.
type Hash struct {
	Params
	Salt []byte
	Key  []byte
}

var b64 = base64.RawStdEncoding.Strict()

// String renders the PHC string; ParseHash(h.String()) gives h back.
func (h Hash) String() string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		Version, h.Memory, h.Iterations, h.Parallelism, b64.EncodeToString(h.Salt), b64.EncodeToString(h.Key))
}

// ParseHash decodes a PHC argon2id string. It is strict, so that every
// accepted string is the canonical rendering of what it decodes to:
// parameters in the order m, t, p, decimal without leading zeros, base64
// without padding, newlines or stray bits, every bound of Params.Validate.
func ParseHash(encoded string) (Hash, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" {
		return Hash{}, fmt.Errorf("%w: want $argon2id$v=19$m=,t=,p=$salt$key", ErrMalformedHash)
	}
	if parts[1] != "argon2id" {
		return Hash{}, fmt.Errorf("%w: algorithm %q (only argon2id)", ErrUnsupportedHash, clip(parts[1]))
	}
	v, ok := strings.CutPrefix(parts[2], "v=")
	if !ok {
		return Hash{}, fmt.Errorf("%w: no version", ErrMalformedHash)
	}
	version, err := decimal(v)
	if err != nil {
		return Hash{}, fmt.Errorf("%w: version: %w", ErrMalformedHash, err)
	}
	if version != Version {
		return Hash{}, fmt.Errorf("%w: argon2 version %d (only %d)", ErrUnsupportedHash, version, Version)
	}
	var h Hash
	fields := strings.Split(parts[3], ",")
	if len(fields) != 3 {
		return Hash{}, fmt.Errorf("%w: parameters must be m=,t=,p=", ErrMalformedHash)
	}
	for i, name := range []string{"m", "t", "p"} {
		val, ok := strings.CutPrefix(fields[i], name+"=")
		if !ok {
			return Hash{}, fmt.Errorf("%w: parameters must be m=,t=,p= in that order", ErrMalformedHash)
		}
		n, err := decimal(val)
		if err != nil {
			return Hash{}, fmt.Errorf("%w: %s: %w", ErrMalformedHash, name, err)
		}
		switch name {
		case "m":
			h.Memory = n
		case "t":
			h.Iterations = n
		case "p":
			if n > 255 {
				return Hash{}, fmt.Errorf("%w: p=%d is over 255", ErrMalformedHash, n)
			}
			h.Parallelism = uint8(n)
		}
	}
	if h.Salt, err = decodeB64(parts[4]); err != nil {
		return Hash{}, fmt.Errorf("%w: salt: %w", ErrMalformedHash, err)
	}
	if h.Key, err = decodeB64(parts[5]); err != nil {
		return Hash{}, fmt.Errorf("%w: key: %w", ErrMalformedHash, err)
	}
	h.SaltLength, h.KeyLength = uint32(len(h.Salt)), uint32(len(h.Key))
	if err := h.Params.Validate(); err != nil {
		return Hash{}, fmt.Errorf("%w: %w", ErrMalformedHash, err)
	}
	return h, nil
}

// decimal parses a canonical unsigned decimal that fits in 32 bits.
func decimal(s string) (uint32, error) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%q is not a canonical decimal", clip(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a canonical decimal", clip(s))
		}
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", clip(s))
	}
	return uint32(n), nil
}

// decodeB64 decodes unpadded standard base64, refusing the newlines the
// decoder would otherwise skip.
func decodeB64(s string) ([]byte, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, errors.New("newline in base64")
	}
	return b64.DecodeString(s)
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}
