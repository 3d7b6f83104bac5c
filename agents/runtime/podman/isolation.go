package podman

import (
	"context"
	"fmt"
	"strings"

	"github.com/containers/common/pkg/capabilities"
	"github.com/containers/podman/v5/pkg/bindings/system"

	"github.com/cairnhq/cairn/agents/runtime"
)

// CheckCapabilities reports the names among caps that this machine's kernel
// does not know (with or without the CAP_ prefix, in any case), and ALL,
// as runtime.ErrInvalid: what the agent checks at start, so a typo fails
// there rather than every kernel.
func CheckCapabilities(caps []string) error {
	for _, c := range caps {
		if strings.EqualFold(c, capabilities.All) {
			return fmt.Errorf("%w: name them; ALL is not a set a kernel may keep", runtime.ErrInvalid)
		}
	}
	if _, err := capabilities.NormalizeCapabilities(caps); err != nil {
		return fmt.Errorf("%w: %w", runtime.ErrInvalid, err)
	}
	return nil
}

// Rootless reports whether the service runs rootless. A rootless service
// already runs every container in the user namespace of its user, and can
// only map ids of that user's /etc/subuid range, so an IDMap in a spec
// means nothing there.
func (r *Runtime) Rootless(ctx context.Context) (bool, error) {
	info, err := system.Info(r.call(ctx), nil)
	if err != nil {
		return false, translate(ctx, "info", err)
	}
	return info.Host.Security.Rootless, nil
}
