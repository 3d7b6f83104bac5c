#!/usr/bin/env bash
# install-podman.sh — make this machine able to run Cairn's containers:
# podman + runc (crun refuses hybrid cgroup layouts), containers.conf with
# lowered rlimits (the sandbox lacks CAP_SYS_RESOURCE), the podman REST API
# service on unix:///run/podman/podman.sock, the local base image
# localhost/cairn/base:latest built from Debian's busybox-static, and the
# host ids kernels' user namespaces map to (`cairn agent --kernel-userns`,
# default 1000000000+65536) reserved in /etc/subuid and /etc/subgid for the
# user "cairn", so useradd never hands them to anyone else.
#
# Idempotent; safe to run on every `make run` / `make test`. Needs root for the
# apt-get and /etc steps; as non-root it only checks and reports.
set -euo pipefail

SOCK=${CAIRN_PODMAN_SOCKET:-/run/podman/podman.sock}
IMAGE=${CAIRN_BASE_IMAGE:-localhost/cairn/base:latest}
# The agent reads the same variables (--kernel-userns-host-id, -size).
USERNS_HOST_ID=${CAIRN_KERNEL_USERNS_HOST_ID:-1000000000}
USERNS_SIZE=${CAIRN_KERNEL_USERNS_SIZE:-65536}

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

# Reserve the kernels' host ids: a cairn line in /etc/subuid and /etc/subgid
# (one is left as it is if present), and say so if another user's range
# overlaps them.
reserve_ids() {
  local file=$1
  if ! grep -q '^cairn:' "$file" 2>/dev/null; then
    log "reserving host ids $USERNS_HOST_ID+$USERNS_SIZE for kernels in $file"
    echo "cairn:$USERNS_HOST_ID:$USERNS_SIZE" >>"$file"
  fi
  awk -F: -v lo="$USERNS_HOST_ID" -v n="$USERNS_SIZE" \
    '$1 != "cairn" && NF == 3 && $2 < lo + n && lo < $2 + $3 { print "install-podman: WARNING: " FILENAME ": " $1 "'"'"'s ids " $2 "+" $3 " overlap the kernels'"'"' " lo "+" n }' "$file" >&2
}
if [[ $(id -u) -eq 0 ]]; then
  reserve_ids /etc/subuid
  reserve_ids /etc/subgid
fi
if [[ $(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 1) -eq 0 ]]; then
  log "WARNING: user namespaces are disabled (user.max_user_namespaces=0): cairn agent refuses to start unless run with --kernel-userns=host"
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
  # setsid: its own session and process group, so Ctrl-C on `make run` (sent
  # to the terminal's foreground group) stops Cairn and leaves the service running.
  (cd / && setsid -f nohup podman system service --time=0 "unix://$SOCK" >/tmp/cairn-podman-service.log 2>&1 &)
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
