#!/usr/bin/env bash
# build-images.sh — build Cairn's local images (what `make images`, `make run`
# and scripts/test.sh call): localhost/cairn/python:latest, a Debian bookworm
# root filesystem made by mmdebstrap from images/python/packages, imported
# into Podman with its entrypoint images/python/cairn-start (Jupyter) and its
# service ports in the label ai.backend.service-ports. (scripts/install-podman.sh
# builds localhost/cairn/base:latest, busybox only; run it first.)
#
# Idempotent and fast when nothing changed: the image carries the label
# io.cairn.recipe, a hash of this script and of images/python/*, and is
# rebuilt only when that hash differs. Needs root to build (mmdebstrap, and
# apt-get to install it when missing) and Debian's mirror; as non-root, or
# when the build fails, it says why and exits 1 (the caller decides whether
# that is fatal).
#
# Environment: CAIRN_PYTHON_IMAGE (default localhost/cairn/python:latest),
# CAIRN_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# CAIRN_DEBIAN_SECURITY_MIRROR (default http://deb.debian.org/debian-security).
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${CAIRN_PYTHON_IMAGE:-localhost/cairn/python:latest}
MIRROR=${CAIRN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${CAIRN_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
RECIPE_DIR=images/python
# The apps the image offers, in Backend.AI's label format (docs/images.md).
SERVICE_PORTS=jupyter:http:8888

log() { echo "build-images: $*" >&2; }

# The recipe: this script and every file of the image's directory, in a
# stable order. Mirrors are not part of it: they serve the same packages.
recipe=$(
  { sha256sum scripts/build-images.sh; find "$RECIPE_DIR" -type f -print0 | sort -z | xargs -0 sha256sum; } |
    sha256sum | cut -c1-16
)

if ! command -v podman >/dev/null 2>&1; then
  log "podman is missing (run scripts/install-podman.sh)"
  exit 1
fi
current() { podman image inspect --format '{{index .Labels "io.cairn.recipe"}}' "$IMAGE" 2>/dev/null || true; }
have=$(current)
if [[ "$have" == "$recipe" ]]; then
  log "$IMAGE is up to date (recipe $recipe)"
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  log "$IMAGE ${have:+has recipe $have, }needs a build (recipe $recipe), which needs root (mmdebstrap): run sudo scripts/build-images.sh"
  exit 1
fi
# One build at a time (make run and make test may start together); the
# one that waited finds the image built.
exec 9>/var/tmp/cairn-build-images.lock
flock 9
have=$(current)
if [[ "$have" == "$recipe" ]]; then
  log "$IMAGE was built meanwhile (recipe $recipe)"
  exit 0
fi
if [[ -n "$have" ]]; then
  log "$IMAGE has recipe $have, want $recipe: rebuilding"
else
  log "$IMAGE is missing: building it (recipe $recipe)"
fi
old_id=$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
if ! command -v mmdebstrap >/dev/null 2>&1; then
  log "installing mmdebstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends mmdebstrap >/dev/null 2>&1 || {
    apt-get update >/dev/null 2>&1
    apt-get install -y --no-install-recommends mmdebstrap >/dev/null
  }
fi

packages=$(grep -v '^[[:space:]]*\(#\|$\)' "$RECIPE_DIR/packages" | paste -sd, -)
tmp=$(mktemp -d /var/tmp/cairn-image.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

log "mmdebstrap: bookworm with $packages"
# essential plus the packages and their dependencies (no Recommends); no
# manual pages, documentation (copyright files stay) or translations. The
# merged-usr hooks install usr-is-merged before the packages, so apt does
# not pick usrmerge (and perl, ~55 MB) for init-system-helpers. dpkg
# unpacks without fsync: a half-written tree is thrown away anyway.
mmdebstrap --variant=essential --include="$packages" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --dpkgopt=force-unsafe-io \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --customize-hook='mkdir -p "$1/home/work" "$1/usr/local/bin"' \
  --customize-hook="copy-in $RECIPE_DIR/cairn-start /usr/local/bin" \
  --customize-hook='chmod 0755 "$1/usr/local/bin/cairn-start"' \
  --customize-hook='rm -rf "$1/var/cache/debconf"/*-old "$1/var/lib/dpkg"/*-old "$1/var/log"/*' \
  bookworm "$tmp/rootfs.tar" \
  "deb $MIRROR bookworm main" \
  "deb $MIRROR bookworm-updates main" \
  "deb $SECURITY bookworm-security main" \
  >"$tmp/mmdebstrap.log" 2>&1 &
# Progress: mmdebstrap's phase lines as they come; its whole log on failure.
tail -n +1 -f "$tmp/mmdebstrap.log" --pid=$! | grep --line-buffered -E '^I: (running apt-get update|downloading|extracting|installing|cleaning)' |
  sed -u 's/^I: /build-images:   /' >&2 &
if ! wait %1; then
  wait %2 || true
  log "mmdebstrap failed:"
  tail -n 30 "$tmp/mmdebstrap.log" >&2
  exit 1
fi
wait %2 || true

log "podman import $IMAGE ($(du -h "$tmp/rootfs.tar" | cut -f1) tarball)"
podman import \
  --change 'ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/cairn-start"]' \
  --change 'CMD []' \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV HOME=/home/work' \
  --change 'WORKDIR /home/work' \
  --change "LABEL ai.backend.service-ports=$SERVICE_PORTS" \
  --change "LABEL io.cairn.recipe=$recipe" \
  --message "cairn python image, recipe $recipe" --quiet \
  "$tmp/rootfs.tar" "$IMAGE" >/dev/null

# The image it replaces would stay as an untagged copy: remove it, unless
# a container still uses it.
if [[ -n "$old_id" ]] && ! podman image inspect --format '{{.Id}}' "$IMAGE" | grep -qx "$old_id"; then
  podman rmi "$old_id" >/dev/null 2>&1 || log "the previous image $old_id is still in use; kept"
fi
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
log "built $IMAGE in $(($(date +%s) - start)) s, $((size / 1024 / 1024)) MiB (recipe $recipe)"
