package devserver

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// banner is what a newcomer needs once the server is up.
type banner struct {
	version         string
	apiURL          string
	email, token    string
	credentialsPath string
	created         bool
	busURL          string
	dataDir         string
	joinURL         string
	loopbackOnly    bool
	agent           string
	images          []string
}

func (s *server) banner() banner {
	path := filepath.Join(s.cfg.DataDir, "credentials.json")
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	b := banner{
		version:         s.cfg.Version,
		apiURL:          s.apiURL,
		email:           s.credentials.Email,
		token:           s.credentials.Token,
		credentialsPath: path,
		created:         s.created,
		busURL:          s.nats.ClientURL(),
		dataDir:         s.cfg.DataDir,
		images:          s.images,
	}
	b.joinURL, b.loopbackOnly = joinURL(s.cfg.NATSListen, s.nats.Port())
	if s.agent != nil {
		b.agent = fmt.Sprintf("%s (Podman %s, GPUs %s)", s.cfg.AgentID, s.cfg.Podman, s.cfg.GPUs)
	}
	return b
}

// joinURL is the bus URL another machine's agent uses: this machine's
// host name when NATS listens on every interface; loopbackOnly when it
// listens on a loopback address.
func joinURL(listen string, port int) (string, bool) {
	host, _, _ := net.SplitHostPort(listen)
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	if host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "<this host>"
		if name, err := os.Hostname(); err == nil && name != "" {
			host = name
		}
	}
	return "nats://" + net.JoinHostPort(host, strconv.Itoa(port)), loopback
}

// printBanner writes the banner: stable "  <label>  <value>" lines that
// scripts may read (the e2e tests read "bus").
func printBanner(w io.Writer, b banner) {
	var sb strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&sb, "  %-12s %s\n", label, fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(&sb, "\nCairn is up (cairn dev %s)\n", b.version)
	line("web-ui", "%s/   (log in with the superadmin's e-mail address and the password in the credentials file)", b.apiURL)
	line("api", "%s   (/healthz, /metrics; /v1 needs the token)", b.apiURL)
	line("superadmin", "%s", b.email)
	line("token", "%s", b.token)
	kept := "kept from an earlier start"
	if b.created {
		kept = "created now"
	}
	line("credentials", "%s   (mode 0600, %s)", b.credentialsPath, kept)
	line("bus", "%s", b.busURL)
	if b.agent != "" {
		line("local agent", "%s", b.agent)
	} else {
		line("local agent", "none (--no-agent): sessions wait for an agent to join")
	}
	line("images", "%s", strings.Join(b.images, ", "))
	fmt.Fprintf(&sb, "\nTry it:\n")
	fmt.Fprintf(&sb, "  curl -H 'Authorization: Bearer %s' %s/v1/agents\n", b.token, b.apiURL)
	fmt.Fprintf(&sb, "\nAnother machine's agent joins with a one-time token (docs/security.md):\n")
	if b.loopbackOnly {
		fmt.Fprintf(&sb, "  (the bus listens on loopback only: start cairn dev with --nats-listen 0.0.0.0:%s first; it then uses TLS)\n", portOf(b.busURL))
	}
	fmt.Fprintf(&sb, "  curl -X POST -H 'Authorization: Bearer %s' %s/v1/agents/<name>/enrollment\n", b.token, b.apiURL)
	fmt.Fprintf(&sb, "  CAIRN_TOKEN=<token> cairn agent enroll --api <this API, reachable from there> --agent-id <name> --data-dir <dir>\n")
	fmt.Fprintf(&sb, "  cairn agent --bus %s --agent-id <name> --data-dir <dir> --listen 0.0.0.0:6001\n", b.joinURL)
	fmt.Fprintf(&sb, "  (or, offline: cairn bus agent-credentials --data-dir %s --agent-id <name> --out <name>.creds,\n", b.dataDir)
	fmt.Fprintf(&sb, "   then --bus-credentials <name>.creds --bus-ca with a copy of %s)\n", filepath.Join(b.dataDir, "bus-keys", "bus-ca.pem"))
	fmt.Fprintf(&sb, "\nCtrl-C stops Cairn; containers keep running and are adopted at the next start.\n\n")
	_, _ = io.WriteString(w, sb.String())
}

func portOf(url string) string {
	_, port, err := net.SplitHostPort(strings.TrimPrefix(url, "nats://"))
	if err != nil {
		return "4222"
	}
	return port
}
