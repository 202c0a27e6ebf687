#!/usr/bin/env bash
# Starts the local PostgreSQL installation when nothing answers on 127.0.0.1:5432 (idempotent).
set -euo pipefail
port="${PGPORT:-5432}"
ready() { pg_isready -q -h 127.0.0.1 -p "$port" 2>/dev/null; }
if ready; then exit 0; fi
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "postgres: not installed; installing Debian's postgresql" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
version="$(ls /etc/postgresql | sort -V | tail -n 1)"
echo "postgres: starting cluster $version/main" >&2
pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
for _ in $(seq 1 100); do ready && exit 0; sleep 0.1; done
echo "postgres: did not become ready on port $port" >&2
exit 1
