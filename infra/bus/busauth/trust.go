package busauth

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/jwt/v2"
)

// AccountName names the Cairn account in its JWT.
const AccountName = "CAIRN"

// Trust is what a NATS server needs to check Cairn's credentials: the
// operator it trusts, its system account and every account's JWT (public
// key → JWT). It holds no secret.
type Trust struct {
	Operator      *jwt.OperatorClaims
	OperatorJWT   string
	SystemAccount string
	Account       string
	Accounts      map[string]string
}

// Trust signs the operator's and accounts' JWTs. revoked maps user public
// keys to the time from which their credentials are refused (those issued
// at or before it): decommissioned agents and replaced keys.
func (k *Keys) Trust(revoked map[string]time.Time) (Trust, error) {
	opPub, err := k.Operator.PublicKey()
	if err != nil {
		return Trust{}, err
	}
	sysPub, err := k.System.PublicKey()
	if err != nil {
		return Trust{}, err
	}
	accPub, err := k.Account.PublicKey()
	if err != nil {
		return Trust{}, err
	}
	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "cairn"
	oc.SystemAccount = sysPub
	opJWT, err := oc.Encode(k.Operator)
	if err != nil {
		return Trust{}, fmt.Errorf("busauth: sign operator: %w", err)
	}
	// The server wants the claims as decoded from a JWT (issuer set).
	decoded, err := jwt.DecodeOperatorClaims(opJWT)
	if err != nil {
		return Trust{}, fmt.Errorf("busauth: operator JWT: %w", err)
	}

	sys := jwt.NewAccountClaims(sysPub)
	sys.Name = "SYS"
	sysJWT, err := sys.Encode(k.Operator)
	if err != nil {
		return Trust{}, fmt.Errorf("busauth: sign system account: %w", err)
	}
	accJWT, err := k.AccountJWT(revoked)
	if err != nil {
		return Trust{}, err
	}
	return Trust{
		Operator: decoded, OperatorJWT: opJWT, SystemAccount: sysPub, Account: accPub,
		Accounts: map[string]string{sysPub: sysJWT, accPub: accJWT},
	}, nil
}

// AccountJWT is the Cairn account's JWT: JetStream enabled without limits
// of its own (the server's apply), bearer tokens refused (every user
// signs the server's nonce with its key), and the given revocations.
func (k *Keys) AccountJWT(revoked map[string]time.Time) (string, error) {
	accPub, err := k.Account.PublicKey()
	if err != nil {
		return "", err
	}
	ac := jwt.NewAccountClaims(accPub)
	ac.Name = AccountName
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{
		MemoryStorage: jwt.NoLimit, DiskStorage: jwt.NoLimit, Streams: jwt.NoLimit, Consumer: jwt.NoLimit,
		MaxAckPending: jwt.NoLimit, MemoryMaxStreamBytes: jwt.NoLimit, DiskMaxStreamBytes: jwt.NoLimit,
	}
	ac.Limits.DisallowBearer = true
	for _, pub := range slices.Sorted(maps.Keys(revoked)) {
		ac.RevokeAt(pub, revoked[pub])
	}
	s, err := ac.Encode(k.Operator)
	if err != nil {
		return "", fmt.Errorf("busauth: sign account: %w", err)
	}
	return s, nil
}
