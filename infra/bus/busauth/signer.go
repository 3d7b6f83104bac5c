package busauth

import (
	"fmt"
	"os"
)

// Signer signs the credentials of agents that enroll over the HTTP API
// (commandapi.BusSigner): a JWT for the agent's own public user key, the
// bus's CA certificate, the account key. The keys stay here.
type Signer struct {
	Keys *Keys
	// CAFile is the bus's CA certificate, "" when the bus has no TLS.
	CAFile string
}

// AgentJWT signs agentID's user JWT for userKey (see Keys.AgentJWT).
func (s Signer) AgentJWT(agentID, userKey string) (string, error) {
	return s.Keys.AgentJWT(agentID, userKey)
}

// BusCAPEM reads the CA certificate (public), "" without TLS.
func (s Signer) BusCAPEM() (string, error) {
	if s.CAFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(s.CAFile)
	if err != nil {
		return "", fmt.Errorf("busauth: bus CA: %w", err)
	}
	return string(b), nil
}

// AccountKey is the account's public key ("" if it cannot be read, which
// LoadOrCreateKeys rules out).
func (s Signer) AccountKey() string {
	pub, err := s.Keys.Account.PublicKey()
	if err != nil {
		return ""
	}
	return pub
}
