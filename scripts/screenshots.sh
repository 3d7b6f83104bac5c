#!/usr/bin/env bash
# screenshots.sh — what `make screenshots` runs: starts bin/cairn dev on a
# free port with a throwaway data directory, makes some sessions and users,
# takes a PNG of every Web-UI page into docs/screenshots, stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-browser.sh
if [[ $(id -u) -eq 0 ]]; then scripts/install-podman.sh; fi

dir=$(mktemp -d /tmp/cairn-screenshots.XXXXXX)
log=$dir/cairn.log
bin/cairn dev --listen 127.0.0.1:0 --app-proxy-listen 127.0.0.1:0 --nats-listen 127.0.0.1:0 --data-dir "$dir/data" --agent-id screenshots >"$log" 2>&1 &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # The agent leaves its containers running at stop: remove them.
  podman --url unix:///run/podman/podman.sock ps -aq --filter label=cairn.agent=screenshots 2>/dev/null |
    xargs -r podman --url unix:///run/podman/podman.sock rm -f >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

for _ in $(seq 1 120); do
  if [[ -s $dir/data/credentials.json ]] && grep -q "Cairn is up" "$log"; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then cat "$log" >&2; exit 1; fi
  sleep 0.5
done
creds=$dir/data/credentials.json
field() { sed -n "s/.*\"$1\": \"\\([^\"]*\\)\".*/\\1/p" "$creds"; }
export CAIRN_URL CAIRN_EMAIL CAIRN_PASSWORD CAIRN_TOKEN
CAIRN_URL=$(field api_url) CAIRN_EMAIL=$(field email) CAIRN_PASSWORD=$(field password) CAIRN_TOKEN=$(field token)
(cd web/ui && node screenshots.mjs)
