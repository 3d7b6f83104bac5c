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

// checkUserNS refuses to start, with what to do about it, when kernels
// are to get a user namespace (Config.UserNS private) the host cannot
// give: the kernel has user namespaces disabled, or the Podman service is
// rootless. Under UserNSHost it only warns that kernels' root is the
// host's root. The kernel limit is read only when Podman is local (a
// unix socket).
func (a *Agent) checkUserNS(ctx context.Context, rt *podman.Runtime) error {
	m := a.cfg.idMap()
	if m == nil {
		kernelsUserNS.Set(0)
		a.log.Warn("kernels share the host's user namespace: a kernel's root is the host's root on its mounts and if it escapes the container",
			"kernel_userns", a.cfg.UserNS)
		return nil
	}
	refuse := func(why string) error {
		return domain.Errorf("agent.start", domain.KindInvalid,
			"kernels cannot get a user namespace (--kernel-userns=%s): %s; fix the host, or start the agent with --kernel-userns=%s to run kernels' root as the host's root",
			UserNSPrivate, why, UserNSHost)
	}
	if u, err := url.Parse(a.cfg.PodmanURI); err == nil && u.Scheme == "unix" {
		b, err := os.ReadFile(maxUserNamespaces)
		if err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n == 0 {
				return refuse(maxUserNamespaces + " is 0 (user namespaces are disabled)")
			}
		}
	}
	rootless, err := rt.Rootless(ctx)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if rootless {
		return refuse(fmt.Sprintf("the Podman service at %s is rootless, and can map only its user's /etc/subuid range (its containers already run in that user's namespace)", a.cfg.PodmanURI))
	}
	kernelsUserNS.Set(1)
	return nil
}
