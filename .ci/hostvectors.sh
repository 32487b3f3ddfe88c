#!/usr/bin/env bash
# The host-proof vectors of SPEC §23.5, recomputed by an independent
# pure-Python implementation written from the SPEC (scripts/host_vectors.py).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v python3 >/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 >/dev/null) || true
  fi
fi
if ! command -v python3 >/dev/null; then
  echo "ci: python3 unavailable; skipping the independent host-proof vector check"
  exit 0
fi
python3 scripts/host_vectors.py >/dev/null
echo "ci: SPEC §23.5 host-proof vectors match the independent Python implementation"
