#!/usr/bin/env bash
# test.sh — what `make test` runs: lint, then every Go test with the race
# detector, with a throwaway PostgreSQL (scripts/with-postgres.sh) and the
# other services the suites need. Suites that could not run are listed at
# the end; with CI=true a missing service fails the run instead.
set -euo pipefail
cd "$(dirname "$0")/.."

# Everything below must also work when invoked directly, not via make.
export GOFLAGS="${GOFLAGS:--buildvcs=false -tags=remote,exclude_graphdriver_btrfs,btrfs_noversion,exclude_graphdriver_devicemapper,containers_image_openpgp}"

# Podman (+ runc, containers.conf, the API service, the base image). As root
# this installs what is missing; otherwise the Podman suites skip loudly
# (and fail with CI=true).
if [[ $(id -u) -eq 0 || "${CI:-}" == "true" ]]; then
  scripts/install-podman.sh
elif ! scripts/install-podman.sh; then
  echo "test.sh: WARNING: Podman is not ready; the Podman suites will not run" >&2
fi

# The local images (localhost/cairn/python: Jupyter, from Debian), built in
# the background while the other suites run (a cold build takes minutes;
# fast when the image's recipe has not changed). The tests that need them
# wait for the file CAIRN_IMAGES_BUILD_DONE names (infra/podmantest); a
# failed build leaves them to say so (skipped loudly, failed with CI=true).
images_log=$(mktemp /tmp/cairn-images-log.XXXXXX)
images_done=$(mktemp -u /tmp/cairn-images-done.XXXXXX)
images_pid=
if [[ $(id -u) -eq 0 || "${CI:-}" == "true" ]]; then
  ( scripts/build-images.sh >"$images_log" 2>&1; echo $? >"$images_done" ) &
  images_pid=$!
  export CAIRN_IMAGES_BUILD_DONE=$images_done
  echo "test.sh: building the local images in the background (log: $images_log)"
fi

# Node's packages and Chromium for the Web-UI's build check and browser
# tests (as root this installs what is missing; otherwise those suites skip
# loudly, and fail with CI=true).
if [[ $(id -u) -eq 0 || "${CI:-}" == "true" ]]; then
  scripts/install-browser.sh
elif ! scripts/install-browser.sh; then
  echo "test.sh: WARNING: the browser tests cannot run (see above)" >&2
fi

# Python 3 for the independent audit verifier (scripts/verify-audit.py),
# which the tests run beside `cairn replay audit --verify`.
if [[ $(id -u) -eq 0 || "${CI:-}" == "true" ]]; then
  scripts/install-python.sh
elif ! scripts/install-python.sh; then
  echo "test.sh: WARNING: python3 is missing; the audit verifiers' agreement test will not run" >&2
fi

report=$(mktemp /tmp/cairn-skips.XXXXXX)
trap 'rm -f "$report" "$images_done"' EXIT
export CAIRN_TEST_SKIP_REPORT=$report

set +e
scripts/with-postgres.sh go test -race -count=1 -timeout 40m ${GO_TEST_FLAGS:-} ./...
rc=$?
if [[ -n "$images_pid" ]]; then
  wait "$images_pid" || true
  status=$(cat "$images_done" 2>/dev/null || echo "?")
  echo "test.sh: the local images' build ended with status $status; its last lines:"
  tail -n 5 "$images_log" | sed 's/^/  /'
fi
set -e

if [[ -s "$report" ]]; then
  echo
  echo "################################################################"
  echo "# SUITES THAT DID NOT RUN (missing services):"
  sed 's/^/#   /' "$report" | sort -u
  echo "################################################################"
fi
exit $rc
