#!/usr/bin/env bash
# The node API in a browser and under promtool: installs Debian's chromium
# and prometheus (for promtool), reruns TestThreeProcesses (three `pog run
# --api` processes) with the dashboard check on, and leaves the rendered
# DOM and a screenshot in bin/ci-artifacts/ (build output, not committed).
set -euo pipefail
cd "$(dirname "$0")/.."

if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ] && { ! command -v chromium >/dev/null || ! command -v promtool >/dev/null; }; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium prometheus >/dev/null) \
    || echo "ci/api: could not install chromium/prometheus from Debian"
fi
if ! command -v chromium >/dev/null && ! command -v promtool >/dev/null; then
  echo "ci/api: notice: neither Chromium nor promtool is available; the dashboard and /metrics lint are skipped"
  exit 0
fi
command -v chromium >/dev/null || echo "ci/api: notice: no Chromium; the dashboard browser check is skipped"
command -v promtool >/dev/null || echo "ci/api: notice: no promtool; the /metrics lint is skipped"

art=bin/ci-artifacts
rm -rf "$art" && mkdir -p "$art"
POG_BROWSER_ARTIFACTS="$PWD/$art" go test -count=1 -v -run '^TestThreeProcesses$' ./cmd/pog/ | grep -E '^(=== RUN|--- |PASS|FAIL|ok|\s+\S+_test.go)' || { echo "ci/api: TestThreeProcesses with the API checks failed"; exit 1; }
if command -v chromium >/dev/null; then
  [ -s "$art/dashboard.png" ] || { echo "ci/api: no dashboard screenshot in $art"; exit 1; }
  echo "ci/api: dashboard rendered rounds in Chromium; screenshot $art/dashboard.png ($(stat -c %s "$art/dashboard.png") bytes)"
fi
