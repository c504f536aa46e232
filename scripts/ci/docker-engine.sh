#!/usr/bin/env bash
# A Docker engine for the end-to-end tests (test/e2e), from Debian's packages, as root:
# installs docker.io and debootstrap when missing, starts dockerd in the background when
# nothing answers on the socket, and waits for it. Safe to run twice.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if ((${#missing[@]})); then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if docker version >/dev/null 2>&1; then
  echo "docker engine: already answering"
  exit 0
fi

log=/tmp/svc-ci-dockerd.log
echo "docker engine: starting dockerd (log in $log)"
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker version >/dev/null 2>&1; then
    echo "docker engine: ready ($(docker version --format '{{.Server.Version}}'))"
    exit 0
  fi
  sleep 1
done
echo "docker engine: dockerd did not answer within 60 s" >&2
tail -n 30 "$log" >&2
exit 1
