#!/usr/bin/env bash
# Packaging checks: the systemd unit verifies, the compose file is valid,
# and the CPU image builds and runs `pog version` where a Docker daemon is
# reachable. Each skips with a
# notice where its tool is missing. (go test ./deploy checks the compose
# file, prometheus.yml and the Dockerfiles' paths without Docker.)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v systemd-analyze >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd >/dev/null) \
    || echo "ci/cli: could not install systemd"
fi
if command -v systemd-analyze >/dev/null; then
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  go build -o "$tmp/pog" ./cmd/pog
  # verify insists ExecStart's binary exists: point the unit at this build.
  sed "s|/usr/local/bin/pog|$tmp/pog|g" deploy/systemd/pog.service > "$tmp/pog.service"
  systemd-analyze verify "$tmp/pog.service"
  systemd-analyze security --offline=true --threshold=30 "$tmp/pog.service" | tail -n 1
  echo "ci/cli: systemd unit verified"
else
  echo "ci/cli: notice: no systemd-analyze, so deploy/systemd/pog.service was not verified"
fi

# The compose file against Compose's own schema (v1 or v2 CLI; neither
# needs a daemon for this).
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose >/dev/null) \
    || echo "ci/cli: could not install docker-compose"
fi
if docker compose version >/dev/null 2>&1; then
  docker compose -f deploy/compose.yaml config -q && echo "ci/cli: deploy/compose.yaml valid (docker compose)"
elif command -v docker-compose >/dev/null; then
  docker-compose -f deploy/compose.yaml config -q && echo "ci/cli: deploy/compose.yaml valid (docker-compose)"
else
  echo "ci/cli: notice: no docker compose, so deploy/compose.yaml was checked by go test ./deploy only"
fi

if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  docker build -q -f deploy/Dockerfile --build-arg COMMIT="$(git rev-parse HEAD)" -t pog:ci .
  docker run --rm pog:ci version
  echo "ci/cli: CPU image built"
else
  echo "ci/cli: notice: no Docker daemon, so the CPU image (deploy/Dockerfile) was not built"
fi
