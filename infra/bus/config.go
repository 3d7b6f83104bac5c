package bus

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// Defaults applied by Config.WithDefaults to zero fields.
const (
	DefaultClientName      = "cairn"
	DefaultConnectTimeout  = 5 * time.Second
	DefaultPublishTimeout  = 10 * time.Second
	DefaultAckWait         = 30 * time.Second
	DefaultMaxInFlight     = 16
	DefaultRetryMin        = 250 * time.Millisecond
	DefaultRetryMax        = 30 * time.Second
	DefaultRetries         = 3
	DefaultDrainTimeout    = 10 * time.Second
	DefaultReplicas        = 1
	DefaultAgentMaxAge     = 7 * 24 * time.Hour
	DefaultReportMaxAge    = 24 * time.Hour
	DefaultDuplicateWindow = 2 * time.Minute

	maxMaxInFlight = 1024
	maxReplicas    = 5
)

// Config configures a connection to the bus. URL is required; every other
// zero field takes its default.
type Config struct {
	// URL is the NATS server, or a comma-separated list of a cluster's
	// servers: nats://host:4222[,nats://host2:4222]. Credentials may be given
	// in the URL (nats://user:pass@host:4222) or with CredentialsFile.
	URL string
	// ClientName names this process's connections on the server (default
	// "cairn"); e.g. "cairn-agent-<id>".
	ClientName string
	// CredentialsFile is a NATS .creds file (JWT and nkey seed), if the
	// server requires one.
	CredentialsFile string
	// CAFile is a PEM file of the certificate authority that signed the
	// server's TLS certificate, when the server uses TLS with a private CA
	// (the embedded server listening beyond loopback: bus-keys/bus-ca.pem
	// in its data directory).
	CAFile string
	// ConnectTimeout bounds the dial of each server (default 5s).
	ConnectTimeout time.Duration
	// PublishTimeout bounds the wait for JetStream's acknowledgement of one
	// published message when ctx has no earlier deadline (default 10s).
	PublishTimeout time.Duration
	// AckWait is how long a handler may take with one message (its context
	// ends then) and how long JetStream waits for an ack before it
	// redelivers (default 30s).
	AckWait time.Duration
	// MaxInFlight is how many messages a consumer hands out before it waits
	// for acks: the prefetch of one Handle (default 16). Messages wait in
	// memory while earlier ones are handled, and their AckWait runs there.
	MaxInFlight int
	// RetryMin and RetryMax bound the backoff after a handler failed:
	// RetryMin after the first failure, doubling up to RetryMax (defaults
	// 250ms and 30s). It paces both the retries in this process and
	// JetStream's redeliveries of a message handed back.
	RetryMin time.Duration
	RetryMax time.Duration
	// Retries is how many times a failed handler is called again with the
	// same delivery, in this process and before later messages, until the
	// message is handed back to JetStream to come again after its backoff
	// (default 3: with the default backoff, 1.75s of waiting in all).
	Retries int
	// MaxDeliveries stops redelivering a message after this many
	// deliveries (each with its Retries); 0 (the default) retries without
	// limit.
	MaxDeliveries int
	// DrainTimeout bounds how long stopping a Handle or closing the Bus
	// waits for in-flight messages (default 10s).
	DrainTimeout time.Duration
	// Replicas is the number of copies of each stream in a NATS cluster
	// (default 1; use 3 on a three-node cluster).
	Replicas int
	// AgentMaxAge and ReportMaxAge are how long agent topics and reports are
	// kept in their streams, acked or not (defaults 7 days and 24 hours).
	AgentMaxAge  time.Duration
	ReportMaxAge time.Duration
	// DuplicateWindow is how long JetStream remembers message ids to drop a
	// republished message (default 2 minutes; at most the smaller max age).
	DuplicateWindow time.Duration
	// SkipProvisioning does not create or update the streams at Connect:
	// for servers where an operator manages them (they must exist then).
	SkipProvisioning bool
	// InboxPrefix is the prefix of this connection's reply subjects, for
	// users whose credentials allow only their own (a report reader:
	// ReaderInboxPrefix). Empty: NATS's default, or the agent's own with
	// AgentID.
	InboxPrefix string
	// AgentID connects as that agent, with the least rights an agent's
	// credentials have (AgentPermissions): nothing is provisioned, replies
	// come to the agent's own inbox prefix, and Handle binds to the
	// agent's consumer, which the manager creates (EnsureAgentConsumer),
	// waiting for it if it does not exist yet. Empty for the manager.
	AgentID string
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	setDefault(&c.ClientName, DefaultClientName)
	setDefault(&c.ConnectTimeout, DefaultConnectTimeout)
	setDefault(&c.PublishTimeout, DefaultPublishTimeout)
	setDefault(&c.AckWait, DefaultAckWait)
	setDefault(&c.MaxInFlight, DefaultMaxInFlight)
	setDefault(&c.RetryMin, DefaultRetryMin)
	setDefault(&c.RetryMax, DefaultRetryMax)
	setDefault(&c.Retries, DefaultRetries)
	setDefault(&c.DrainTimeout, DefaultDrainTimeout)
	setDefault(&c.Replicas, DefaultReplicas)
	setDefault(&c.AgentMaxAge, DefaultAgentMaxAge)
	setDefault(&c.ReportMaxAge, DefaultReportMaxAge)
	setDefault(&c.DuplicateWindow, DefaultDuplicateWindow)
	return c
}

func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}

// Validate reports every problem of c at once. Zero fields other than URL
// are valid (they take their defaults).
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if strings.TrimSpace(c.URL) == "" {
		add("url: must be set (nats://host:4222)")
	}
	for u := range strings.SplitSeq(c.URL, ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		if err := validateServerURL(u); err != nil {
			add("url %q: %v", redactURL(u), err)
		}
	}
	if c.AgentID != "" {
		if err := ValidateID("agent id", c.AgentID); err != nil {
			errs = append(errs, err)
		}
	}
	if strings.ContainsAny(c.ClientName, "\r\n") {
		add("client name %q: must be one line", c.ClientName)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"connect timeout", c.ConnectTimeout}, {"publish timeout", c.PublishTimeout},
		{"ack wait", c.AckWait}, {"retry min", c.RetryMin}, {"retry max", c.RetryMax},
		{"drain timeout", c.DrainTimeout}, {"agent max age", c.AgentMaxAge},
		{"report max age", c.ReportMaxAge}, {"duplicate window", c.DuplicateWindow},
	} {
		if d.v < 0 {
			add("%s %s: must not be negative", d.name, d.v)
		}
	}
	if c.MaxInFlight < 0 || c.MaxInFlight > maxMaxInFlight {
		add("max in flight %d: must be between 1 and %d", c.MaxInFlight, maxMaxInFlight)
	}
	if c.Retries < 0 {
		add("retries %d: must not be negative (0: the default)", c.Retries)
	}
	if c.MaxDeliveries < 0 {
		add("max deliveries %d: must not be negative (0: no limit)", c.MaxDeliveries)
	}
	if c.Replicas < 0 || c.Replicas > maxReplicas {
		add("replicas %d: must be between 1 and %d", c.Replicas, maxReplicas)
	}
	// Relations between fields hold for the effective values.
	d := c.WithDefaults()
	if d.RetryMin > d.RetryMax && c.RetryMin >= 0 && c.RetryMax >= 0 {
		add("retry min %s: must not exceed retry max %s", d.RetryMin, d.RetryMax)
	}
	if w := d.DuplicateWindow; w > d.AgentMaxAge || w > d.ReportMaxAge {
		add("duplicate window %s: must not exceed the agent (%s) or report (%s) max age", w, d.AgentMaxAge, d.ReportMaxAge)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bus: invalid config: %w", err)
	}
	return nil
}

func validateServerURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	switch u.Scheme {
	case "nats", "tls", "ws", "wss":
	default:
		return fmt.Errorf("scheme %q: want nats, tls, ws or wss", u.Scheme)
	}
	if u.Hostname() == "" {
		return errors.New("no host")
	}
	return nil
}

// redactedURL is URL with every secret hidden, for logs.
func (c Config) redactedURL() string {
	parts := strings.Split(c.URL, ",")
	for i, p := range parts {
		parts[i] = redactURL(strings.TrimSpace(p))
	}
	return strings.Join(parts, ",")
}

// redactURL hides a password, and a user name without a password (NATS
// takes a token that way: nats://token@host).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	} else {
		u.User = url.User("xxxxx")
	}
	return u.String()
}

// logValue is the effective configuration, for the start-up log line.
func (c Config) logValue() slog.Value {
	return slog.GroupValue(
		slog.String("url", c.redactedURL()),
		slog.String("client_name", c.ClientName),
		slog.Bool("credentials_file", c.CredentialsFile != ""),
		slog.String("ca_file", c.CAFile),
		slog.Duration("ack_wait", c.AckWait),
		slog.Int("max_in_flight", c.MaxInFlight),
		slog.Duration("retry_min", c.RetryMin),
		slog.Duration("retry_max", c.RetryMax),
		slog.Int("retries", c.Retries),
		slog.Int("max_deliveries", c.MaxDeliveries),
		slog.Int("replicas", c.Replicas),
		slog.Duration("agent_max_age", c.AgentMaxAge),
		slog.Duration("report_max_age", c.ReportMaxAge),
		slog.Duration("duplicate_window", c.DuplicateWindow),
		slog.Bool("skip_provisioning", c.SkipProvisioning),
		slog.String("agent_id", c.AgentID),
	)
}
