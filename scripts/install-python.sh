#!/usr/bin/env bash
# install-python.sh — what the audit verifier's tests need: Python 3 (the
# independent verifier scripts/verify-audit.py uses its standard library
# only). Installing Debian's python3 needs root; without it, a missing
# python3 is reported and the script fails.
set -euo pipefail

if command -v python3 >/dev/null; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install-python.sh: python3 missing; run this script as root to install it" >&2
  exit 1
fi
echo "install-python.sh: installing python3"
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 >/dev/null
fi
