#!/usr/bin/env bash
# install-podman.sh — make this machine able to run Cairn's containers:
# podman + runc (crun refuses hybrid cgroup layouts), containers.conf with
# lowered rlimits (the sandbox lacks CAP_SYS_RESOURCE), the podman REST API
# service on unix:///run/podman/podman.sock, and the local base image
# localhost/cairn/base:latest built from Debian's busybox-static.
#
# Idempotent; safe to run on every `make run` / `make test`. Needs root for the
# apt-get and /etc steps; as non-root it only checks and reports.
set -euo pipefail

SOCK=${CAIRN_PODMAN_SOCKET:-/run/podman/podman.sock}
IMAGE=${CAIRN_BASE_IMAGE:-localhost/cairn/base:latest}

log() { echo "install-podman: $*" >&2; }

need=()
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v runc >/dev/null 2>&1 || need+=(runc)
dpkg -s busybox-static >/dev/null 2>&1 || need+=(busybox-static)
if [[ ${#need[@]} -gt 0 ]]; then
  if [[ $(id -u) -ne 0 ]]; then
    log "missing ${need[*]}; run as root or install them: apt-get install -y ${need[*]}"
    exit 1
  fi
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "${need[@]}" >/dev/null 2>&1 || {
    apt-get update >/dev/null 2>&1
    apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
  }
fi

if [[ $(id -u) -eq 0 ]]; then
  conf=/etc/containers/containers.conf
  if ! grep -q 'cairn:managed' "$conf" 2>/dev/null; then
    log "writing $conf (runc, lowered rlimits)"
    mkdir -p /etc/containers
    cat >"$conf" <<'CONF'
# cairn:managed — written by scripts/install-podman.sh
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
CONF
  fi
fi

# ping the API service (curl when present, else podman's own remote client)
ping() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsS --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1
  else
    podman --remote --url "unix://$SOCK" version >/dev/null 2>&1
  fi
}

if ! ping; then
  log "starting the podman API service on unix://$SOCK"
  mkdir -p "$(dirname "$SOCK")"
  # From /: the service outlives this script, and conmon fails every
  # container ("Failed to get working directory") once the directory it
  # was started in is removed (a CI checkout, a temporary clone).
  (cd / && nohup podman system service --time=0 "unix://$SOCK" >/tmp/cairn-podman-service.log 2>&1 &)
  for _ in $(seq 1 100); do
    ping && break
    sleep 0.1
  done
  ping || { log "podman service did not start:"; cat /tmp/cairn-podman-service.log >&2; exit 1; }
fi

if ! podman image exists "$IMAGE"; then
  log "building $IMAGE from busybox-static"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/root/bin" "$tmp/root/tmp" "$tmp/root/home/work" "$tmp/root/etc"
  cp "$(readlink -f /bin/busybox)" "$tmp/root/bin/busybox"
  for app in sh echo cat ls sleep env true false printf mkdir rm touch id head tail wc grep sed date yes dd; do
    ln -sf busybox "$tmp/root/bin/$app"
  done
  echo 'root:x:0:0:root:/root:/bin/sh' >"$tmp/root/etc/passwd"
  echo 'work:x:1000:1000:work:/home/work:/bin/sh' >>"$tmp/root/etc/passwd"
  echo 'root:x:0:' >"$tmp/root/etc/group"
  tar -C "$tmp/root" -cf "$tmp/rootfs.tar" .
  podman import --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/bin' "$tmp/rootfs.tar" "$IMAGE" >/dev/null
fi
log "ready: podman $(podman --version | awk '{print $3}'), socket unix://$SOCK, image $IMAGE"
