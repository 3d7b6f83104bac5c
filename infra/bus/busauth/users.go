package busauth

import (
	"fmt"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus"
)

// ManagerCredentials is a new NATS credentials file (JWT and seed) for a
// manager process: a user of the Cairn account without limits, since the
// manager provisions the streams and consumers and writes every agent's
// topic. Keep it as secret as the keys.
func (k *Keys) ManagerCredentials(name string) ([]byte, error) {
	user, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	pub, err := user.PublicKey()
	if err != nil {
		return nil, err
	}
	uc := jwt.NewUserClaims(pub)
	uc.Name = "manager:" + name
	return k.credentials(uc, user)
}

// AgentCredentials is a new NATS credentials file for agentID, with a user
// key made here, and that key's public part (to revoke it later). The
// agent may do exactly what bus.AgentPermissions allows.
func (k *Keys) AgentCredentials(agentID string) (creds []byte, userKey string, err error) {
	user, err := nkeys.CreateUser()
	if err != nil {
		return nil, "", err
	}
	pub, err := user.PublicKey()
	if err != nil {
		return nil, "", err
	}
	uc, err := agentClaims(agentID, pub)
	if err != nil {
		return nil, "", err
	}
	creds, err = k.credentials(uc, user)
	return creds, pub, err
}

// AgentJWT is the user JWT for agentID's own user key userKey (a public
// nkey beginning with U, made by the agent, whose seed never leaves it):
// with the seed, it makes the agent's credentials (jwt.FormatUserConfig).
func (k *Keys) AgentJWT(agentID, userKey string) (string, error) {
	if !nkeys.IsValidPublicUserKey(userKey) {
		return "", domain.Invalid("busauth.agent-jwt", "user_key", "not a public NATS user key (U...)")
	}
	uc, err := agentClaims(agentID, userKey)
	if err != nil {
		return "", err
	}
	s, err := uc.Encode(k.Account)
	if err != nil {
		return "", fmt.Errorf("busauth: sign agent %s: %w", agentID, err)
	}
	return s, nil
}

func agentClaims(agentID, userKey string) (*jwt.UserClaims, error) {
	perms, err := bus.AgentPermissions(agentID)
	if err != nil {
		return nil, err
	}
	uc := jwt.NewUserClaims(userKey)
	uc.Name = "agent:" + agentID
	uc.Tags.Add("cairn-agent:" + agentID)
	uc.Permissions.Pub.Allow.Add(perms.Publish...)
	uc.Permissions.Sub.Allow.Add(perms.Subscribe...)
	// An agent subscribes to its inbox and its deliveries, nothing else.
	uc.Limits.Subs = 16
	return uc, nil
}

// AppProxyCredentials is a new NATS credentials file for an app proxy
// whose durable consumer of the reports is durable: it may do exactly what
// bus.ReportReaderPermissions allows (read the agents' reports, where they
// announce their endpoints), nothing a manager or an agent may.
func (k *Keys) AppProxyCredentials(durable string) ([]byte, error) {
	perms, err := bus.ReportReaderPermissions(durable)
	if err != nil {
		return nil, err
	}
	user, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	pub, err := user.PublicKey()
	if err != nil {
		return nil, err
	}
	uc := jwt.NewUserClaims(pub)
	uc.Name = "app-proxy:" + durable
	uc.Permissions.Pub.Allow.Add(perms.Publish...)
	uc.Permissions.Sub.Allow.Add(perms.Subscribe...)
	uc.Limits.Subs = 16
	return k.credentials(uc, user)
}

func (k *Keys) credentials(uc *jwt.UserClaims, user nkeys.KeyPair) ([]byte, error) {
	token, err := uc.Encode(k.Account)
	if err != nil {
		return nil, fmt.Errorf("busauth: sign user %s: %w", uc.Name, err)
	}
	seed, err := user.Seed()
	if err != nil {
		return nil, err
	}
	return jwt.FormatUserConfig(token, seed)
}
