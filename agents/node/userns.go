package node

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/cairnhq/cairn/agents/runtime/podman"
	"github.com/cairnhq/cairn/domain"
)

// maxUserNamespaces is the kernel's limit on user namespaces; 0 disables
// them.
const maxUserNamespaces = "/proc/sys/user/max_user_namespaces"

// checkUserNS refuses to start, saying what to do about it, when kernels
// are to get a user namespace (Config.UserNS private) that the host cannot
// give: the kernel has user namespaces disabled, or the Podman service is
// rootless. Under UserNSHost it only warns that kernels' root is the
// host's root. The kernel's limit is read only when Podman is local (a
// unix socket).
func (a *Agent) checkUserNS(ctx context.Context, rt *podman.Runtime) error {
	if a.cfg.idMap() == nil {
		kernelsUserNS.Set(0)
		a.log.Warn("kernels share the host's user namespace: a kernel's root is the host's root on its mounts and if it escapes the container",
			"kernel_userns", a.cfg.UserNS)
		return nil
	}
	limit := ""
	if u, err := url.Parse(a.cfg.PodmanURI); err == nil && u.Scheme == "unix" {
		if b, err := os.ReadFile(maxUserNamespaces); err == nil {
			limit = string(b)
		}
	}
	rootless, err := rt.Rootless(ctx)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if why := userNSUnavailable(limit, rootless, a.cfg.PodmanURI); why != "" {
		return domain.Errorf("agent.start", domain.KindInvalid,
			"kernels cannot get a user namespace (--kernel-userns=%s): %s; fix the host, or start with --kernel-userns=%s to run kernels' root as the host's root",
			UserNSPrivate, why, UserNSHost)
	}
	kernelsUserNS.Set(1)
	return nil
}

// userNSUnavailable says why kernels cannot get a user namespace, given
// the kernel's user namespace limit ("" when unknown) and whether the
// Podman service at uri is rootless; "" when they can.
func userNSUnavailable(limit string, rootless bool, uri string) string {
	if n, err := strconv.Atoi(strings.TrimSpace(limit)); err == nil && n == 0 {
		return maxUserNamespaces + " is 0 (user namespaces are disabled)"
	}
	if rootless {
		return fmt.Sprintf("the Podman service at %s is rootless: it maps only its user's /etc/subuid range (its containers already run in that user's namespace)", uri)
	}
	return ""
}
