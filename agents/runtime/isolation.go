package runtime

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// DefaultCapabilities are the only capabilities a kernel keeps when its
// spec does not name others; every other one is dropped. Each is what an
// ordinary session image needs from its root user:
//
//   - CHOWN: package managers (dpkg, pip as root) and entrypoints that hand
//     a home directory to the session user chown files.
//   - DAC_OVERRIDE: root administers files it does not own or that deny it
//     (apt's _apt-owned 0700 partial directory, 0444 files, a user's home).
//   - FOWNER: chmod and utimes on files of another owner (tar and dpkg
//     restore modes and times after chown).
//   - KILL: a root entrypoint or supervisor signals the session user's
//     processes.
//   - SETUID, SETGID: su, gosu and setpriv drop from root to the session
//     user.
//
// Dropped from Podman's defaults: FSETID, SETPCAP, SETFCAP, NET_BIND_SERVICE
// (sessions serve on high ports), SYS_CHROOT (and NET_RAW, MKNOD and
// AUDIT_WRITE, which Podman already drops).
var DefaultCapabilities = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETGID", "SETUID"}

// capabilityPattern is a capability name, with or without its CAP_ prefix;
// which names exist is the runtime's to say (the kernel's list).
var capabilityPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z_]*$`)

// DefaultIDMap is the user namespace mapping agents give kernels unless
// configured otherwise: 65536 ids (enough for the ids images use, nobody's
// 65534 included) from 1000000000, far above the ranges useradd hands out
// in /etc/subuid (up to 600100000) and below Podman's userns=auto range
// (from 2147483647). scripts/install-podman.sh reserves it in /etc/subuid
// and /etc/subgid for the user "cairn".
var DefaultIDMap = IDMap{HostID: 1_000_000_000, Size: 65536}

// IDMap puts a kernel in its own user namespace: ids 0 to Size-1 inside the
// container (uids and gids alike) are HostID to HostID+Size-1 on the host.
// Root in the container is then HostID on the host, an unprivileged id, on
// processes and on every file it writes to a mount.
type IDMap struct {
	HostID uint32
	Size   uint32
}

// Contains reports whether id is a host id of the mapping.
func (m IDMap) Contains(id uint32) bool {
	return id >= m.HostID && uint64(id) < uint64(m.HostID)+uint64(m.Size)
}

// Validate reports a mapping that would give a container host root or an
// id the kernel refuses; each problem matches ErrInvalid.
func (m IDMap) Validate() error {
	switch {
	case m.HostID == 0:
		return fmt.Errorf("%w: user namespace: host id 0 would make the container's root the host's root", ErrInvalid)
	case m.Size == 0:
		return fmt.Errorf("%w: user namespace: size is 0", ErrInvalid)
	case uint64(m.HostID)+uint64(m.Size) > math.MaxUint32:
		// (uid_t)-1 is no id: it means "unchanged" to chown.
		return fmt.Errorf("%w: user namespace: host ids %d+%d go past %d", ErrInvalid, m.HostID, m.Size, uint32(math.MaxUint32-1))
	}
	return nil
}

// validCapability reports whether c looks like a capability name.
func validCapability(c string) bool {
	return capabilityPattern.MatchString(c) && !strings.EqualFold(c, "ALL") && !strings.EqualFold(c, "CAP_")
}
