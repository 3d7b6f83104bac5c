#!/usr/bin/env bash
# install-browser.sh — what the Web-UI's build check and browser tests need:
# Node and npm, the npm packages pinned by web/ui/package-lock.json (npm ci,
# again only when the lockfile changed), and Debian's Chromium, which
# playwright-core drives (Playwright's own browser download is not used).
# Installing Debian packages needs root; without it, what is missing is
# reported and the script fails. --node-only skips Chromium (make webui).
set -euo pipefail
cd "$(dirname "$0")/.."

apt_install() {
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-browser.sh: $* missing; run this script as root to install it" >&2
    exit 1
  fi
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null
  fi
}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-browser.sh: installing Node and npm"
  apt_install nodejs npm
fi
if [[ ${1:-} != --node-only && ! -x ${CAIRN_CHROMIUM:-/usr/bin/chromium} ]]; then
  echo "install-browser.sh: installing Chromium"
  apt_install chromium
fi

stamp=web/ui/node_modules/.cairn-lock-sha256
want=$(sha256sum web/ui/package-lock.json | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  echo "install-browser.sh: npm ci in web/ui"
  (cd web/ui && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi
