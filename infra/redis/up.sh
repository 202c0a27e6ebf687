#!/usr/bin/env bash
# Starts the local Redis installation when nothing answers on 127.0.0.1:6379 (idempotent), with
# the eviction policy BullMQ needs (noeviction: queues must never lose keys).
set -euo pipefail
port="${REDIS_PORT:-6379}"
ready() { [ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = "PONG" ]; }
if ! ready; then
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "redis: not installed; installing Debian's redis-server" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  fi
  mkdir -p /var/lib/redis /var/log/redis
  echo "redis: starting on port $port" >&2
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$port" --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/agentyard.log
  for _ in $(seq 1 100); do ready && break; sleep 0.1; done
  ready || { echo "redis: did not become ready on port $port" >&2; exit 1; }
fi
redis-cli -h 127.0.0.1 -p "$port" config set maxmemory-policy noeviction >/dev/null
