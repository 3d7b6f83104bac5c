// Package busauth is who may speak on Cairn's bus: the NATS identities of
// the manager and of every agent, and what each may publish and subscribe
// to. It uses NATS's own decentralized authentication (an operator, an
// account, users carrying signed JWTs with their permissions; nats-io/jwt
// and nkeys), so that a NATS server, embedded or external, enforces it:
//
//   - Keys holds the operator, system account and Cairn account keys of
//     one installation (LoadOrCreateKeys keeps their seeds in a directory
//     only its owner can read). The Cairn account key signs users'
//     credentials; the operator key signs the accounts.
//   - Trust is what a server needs to check credentials (the operator's
//     JWT and the accounts' JWTs): natsembed.Options.Auth.
//   - ManagerCredentials has no limits: the manager provisions streams and
//     consumers and publishes to every agent's topic.
//   - AgentCredentials binds an agent id to a user key and allows exactly
//     bus.AgentPermissions(id): publishing its own reports
//     (cairn.reports.<id>), consuming its own consumer of its own topic
//     (which the manager creates), receiving replies on its own inbox
//     prefix. It cannot read another agent's topic or the streams, create
//     consumers, or publish as anyone else. The server refuses anonymous
//     connections and bearer tokens (every user proves it holds its key).
//   - Signer signs, for the HTTP API (commandapi.BusSigner), the JWT of an
//     agent that enrolled its own key with a one-time token (`cairn agent
//     enroll`): the agent makes the key, the seed never leaves it.
//   - AppProxyCredentials lets a separate app proxy read the agents'
//     reports through its one consumer (bus.ReportReaderPermissions), and
//     IssueAppProxyKey grants it a signing key of its own for agents'
//     apps and terminals (RequestVerifier.Delegated): the proxy never
//     holds the account key.
//   - Revoking a user key (an agent decommissioned or re-enrolled with a
//     new key) is recorded in the Cairn account's JWT (Keys.Trust with the
//     revoked keys), which a running embedded server takes at once
//     (natsembed.Server.UpdateAccount); infra/bus/busrevoke does it for
//     every revocation in the event log.
//
// The manager reads the sender of a report from the subject it arrived on
// (bus.ReportSender), which the server guarantees, never from the payload.
package busauth
