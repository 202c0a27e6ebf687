#!/usr/bin/env bash
# Makes a Docker-compatible container engine API available on this machine.
#
# - If $DOCKER_HOST (or /var/run/docker.sock) already answers /_ping, nothing is changed.
# - Otherwise Podman's Docker-compatible API is set up and started (Debian 12, root):
#   packages podman + crun (+ runc), the hybrid-cgroup fix, default ulimits for crun, and
#   `podman system service` on unix:///run/podman/podman.sock.
#
# - Under Podman, agents' egress rules (nftables): see setup_agent_egress below, and the guard of
#   agents' own networks' bridges: see setup_agent_bridges.
#
# Idempotent: a second run only checks and returns within a fraction of a second.
# Progress goes to stderr; the last stdout line is the DOCKER_HOST value to use.
#
# Options:
#   --agent-egress-address ADDR  source address of agents' user-mode networks (default 198.18.255.1)
#   --agent-listener IPV4:PORT   the edge's agent listener: the one host address agents may reach
set -euo pipefail

PODMAN_SOCK=/run/podman/podman.sock
PODMAN_PIDFILE=/run/podman/agentyard-podman-service.pid
PODMAN_LOG=/var/log/agentyard-podman.log
CONTAINERS_CONF=/etc/containers/containers.conf
WANT_ULIMITS=("nofile=1024:1024" "nproc=4096:4096")
WAIT_SECONDS=${AGENTYARD_ENGINE_WAIT_SECONDS:-20}

log() { printf 'container-engine: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

AGENT_EGRESS_ADDRESS=198.18.255.1
AGENT_LISTENERS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --agent-egress-address) AGENT_EGRESS_ADDRESS=${2:?}; shift 2 ;;
    --agent-listener) AGENT_LISTENERS+=("${2:?}"); shift 2 ;;
    *) die "unknown option $1" ;;
  esac
done
ipv4_re='^([0-9]{1,3}\.){3}[0-9]{1,3}$'
[[ $AGENT_EGRESS_ADDRESS =~ $ipv4_re ]] || die "--agent-egress-address: not an IPv4 address: $AGENT_EGRESS_ADDRESS"
for l in ${AGENT_LISTENERS[@]+"${AGENT_LISTENERS[@]}"}; do
  [[ ${l%:*} =~ $ipv4_re && ${l##*:} =~ ^[0-9]{1,5}$ ]] || die "--agent-listener: not IPV4:PORT: $l"
done

# Agents' egress under Podman. Each agent has a user-mode network (slirp4netns) whose host-side
# sockets are bound to AGENT_EGRESS_ADDRESS (the driver's network mode says outbound_addr=...): the
# rules below match that source in the host's OUTPUT chain, so they hold for every agent container
# and touch no other traffic or container. Agents may reach the public internet (masqueraded to the
# host's address), DNS at the host's resolvers and the edge's agent listener(s) given with
# --agent-listener; never the host's own addresses, loopback, link-local (cloud metadata at
# 169.254.169.254), private, shared (100.64/10) or multicast ranges. Agents get no IPv6 (enable_ipv6=false).
# Without the address on the host, slirp4netns cannot bind and the agent has no network: closed, not open.
# Idempotent: the table's chains are rewritten in one transaction; listeners already allowed stay.
setup_agent_egress() {
  if ! command -v nft >/dev/null; then
    log "installing nftables (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nftables >&2
  fi
  if ! ip -4 -o addr show dev lo | grep -q " ${AGENT_EGRESS_ADDRESS}/"; then
    log "agent egress: adding $AGENT_EGRESS_ADDRESS to lo"
    ip addr add "$AGENT_EGRESS_ADDRESS/32" dev lo 2>/dev/null || ip -4 -o addr show dev lo | grep -q " ${AGENT_EGRESS_ADDRESS}/" || die "cannot add $AGENT_EGRESS_ADDRESS to lo"
  fi
  local resolvers listeners add_resolvers='' add_listeners=''
  resolvers=$(awk '$1 == "nameserver" && $2 ~ /^[0-9.]+$/ { printf "%s%s", sep, $2; sep = ", " }' /etc/resolv.conf 2>/dev/null || true)
  listeners=$(IFS=,; echo "${AGENT_LISTENERS[*]+"${AGENT_LISTENERS[*]}"}" | sed 's/:/ . /g; s/,/, /g')
  [ -z "$resolvers" ] || add_resolvers="add element inet agentyard_egress resolvers { $resolvers }"
  [ -z "$listeners" ] || add_listeners="add element inet agentyard_egress listeners { $listeners }"
  nft -f - <<RULES || die "agent egress: nft refused the rules"
table inet agentyard_egress {
  set listeners { type ipv4_addr . inet_service; flags timeout; }
  set resolvers { type ipv4_addr; }
  chain output { type filter hook output priority filter; policy accept; }
  chain agent { }
  chain refuse { }
  chain postrouting { type nat hook postrouting priority srcnat; policy accept; }
}
flush chain inet agentyard_egress output
flush chain inet agentyard_egress agent
flush chain inet agentyard_egress refuse
flush chain inet agentyard_egress postrouting
flush set inet agentyard_egress resolvers
table inet agentyard_egress {
  chain output {
    ip saddr $AGENT_EGRESS_ADDRESS jump agent
  }
  chain agent {
    ip daddr . tcp dport @listeners accept
    ip daddr @resolvers udp dport 53 accept
    ip daddr @resolvers tcp dport 53 accept
    fib daddr type { local, broadcast, anycast, multicast } goto refuse
    ip daddr { 0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 169.254.0.0/16, 172.16.0.0/12, 192.0.0.0/24, 192.168.0.0/16, 198.18.0.0/15, 224.0.0.0/3 } goto refuse
    meta nfproto ipv6 goto refuse
  }
  chain refuse {
    meta l4proto tcp reject with tcp reset
    reject with icmpx admin-prohibited
  }
  chain postrouting {
    ip saddr $AGENT_EGRESS_ADDRESS oifname != "lo" masquerade
  }
}
$add_resolvers
$add_listeners
RULES
}

# Agents' own networks (compose: an internal network per agent, libs/runtime/src/agent-networks.ts)
# have bridges named ayg…. The engine puts each one's gateway address on the host, where its DNS
# answers the peers' names; any host service listening on every address would answer there too. So
# the host takes nothing from those bridges but DNS and replies to what it opened itself.
# Idempotent: the chain is rewritten in one transaction.
setup_agent_bridges() {
  nft -f - <<RULES || die "agent bridges: nft refused the rules"
table inet agentyard_agent_bridges {
  chain input { type filter hook input priority filter; policy accept; }
}
flush chain inet agentyard_agent_bridges input
table inet agentyard_agent_bridges {
  chain input {
    iifname != "ayg*" accept
    ct state established,related accept
    meta l4proto { tcp, udp } th dport 53 accept
    meta l4proto tcp reject with tcp reset
    reject with icmpx admin-prohibited
  }
}
RULES
}

done_with() {
  # Podman's API (ours, or one given by DOCKER_HOST): the agents' egress rules go with it.
  case "$1" in *podman*) if [ "$(id -u)" -eq 0 ]; then setup_agent_egress; setup_agent_bridges; else log "WARNING: not root: agents' egress rules not installed"; fi ;; esac
  log "engine ready at $1"; printf '%s\n' "$1"; exit 0
}

# ping_host <DOCKER_HOST value> -> 0 when the engine answers GET /_ping with OK.
ping_host() {
  local host=$1 out
  case "$host" in
    unix://*) out=$(curl -sS --max-time 2 --unix-socket "${host#unix://}" http://d/_ping 2>/dev/null) || return 1 ;;
    tcp://*) out=$(curl -sS --max-time 2 "http://${host#tcp://}/_ping" 2>/dev/null) || return 1 ;;
    http://*|https://*) out=$(curl -sS --max-time 2 "${host%/}/_ping" 2>/dev/null) || return 1 ;;
    /*) out=$(curl -sS --max-time 2 --unix-socket "$host" http://d/_ping 2>/dev/null) || return 1 ;;
    *) return 1 ;;
  esac
  [ "$out" = OK ]
}


# curl does the /_ping checks (it is on these machines; install it on a bare one).
if ! command -v curl >/dev/null; then
  [ "$(id -u)" -eq 0 ] || die "curl is missing"
  log "installing curl (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >&2
fi

# 1. An engine that already answers wins (a real Docker host, or a CI-provided one).
if [ -n "${DOCKER_HOST:-}" ] && ping_host "$DOCKER_HOST"; then done_with "$DOCKER_HOST"; fi
if [ -S /var/run/docker.sock ] && ping_host unix:///var/run/docker.sock; then
  done_with unix:///var/run/docker.sock
fi
[ -z "${DOCKER_HOST:-}" ] || log "DOCKER_HOST=$DOCKER_HOST does not answer /_ping; using Podman instead"

[ "$(id -u)" -eq 0 ] || die "setting up Podman needs root (no engine answered at \$DOCKER_HOST or /var/run/docker.sock)"

# Serialize concurrent runs (the checks below are idempotent, but starting the service is not).
mkdir -p /run/lock
exec 9>/run/lock/agentyard-container-engine.lock
flock -w 120 9 || die "another up.sh holds /run/lock/agentyard-container-engine.lock"

# 2. Packages.
pkg_installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
missing=()
# crun is Podman's first choice of OCI runtime when installed: measured here, a container's
# create+start took ~115 ms with it against ~150 ms with runc (one at a time). runc stays as the fallback.
for p in podman crun runc; do pkg_installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # Recommended packages are wanted: catatonit (--init), netavark + aardvark-dns (bridge
  # networking, published ports), slirp4netns, fuse-overlayfs, uidmap.
  apt-get install -y -qq "${missing[@]}" >&2
fi
command -v podman >/dev/null || die "podman not found after installation"

# 3. Hybrid cgroup layout: crun refuses while the cgroup2 mount still holds controllers
#    ("cgroups in hybrid mode not supported"). Mount each such controller as cgroup v1.
UNIFIED_CTRL=/sys/fs/cgroup/unified/cgroup.controllers
if [ -r "$UNIFIED_CTRL" ] && [ -n "$(tr -d '[:space:]' < "$UNIFIED_CTRL")" ]; then
  for c in $(cat "$UNIFIED_CTRL"); do
    dir=/sys/fs/cgroup/$c
    if mountpoint -q "$dir" 2>/dev/null; then continue; fi
    log "cgroup: moving controller '$c' from cgroup2 to a v1 mount at $dir"
    mkdir -p "$dir"
    mount -t cgroup -o "$c" cgroup "$dir" || log "WARNING: could not mount cgroup v1 controller $c"
  done
  if [ -n "$(tr -d '[:space:]' < "$UNIFIED_CTRL")" ]; then
    log "WARNING: $UNIFIED_CTRL still lists: $(cat "$UNIFIED_CTRL") (crun may refuse to run containers)"
  fi
fi

# 4. Container default ulimits (crun cannot raise RLIMIT_NOFILE/NPROC here). Merges into
#    [containers].default_ulimits: keeps other entries, replaces nofile/nproc with ours.
merge_ulimits() {
  local tmp
  mkdir -p "$(dirname "$CONTAINERS_CONF")"
  [ -f "$CONTAINERS_CONF" ] || : > "$CONTAINERS_CONF"
  tmp=$(mktemp)
  awk -v want="$(IFS=,; echo "${WANT_ULIMITS[*]}")" '
    function header_name(line,   s) {
      s = line; sub(/^[ \t]*\[/, "", s); sub(/\][ \t]*(#.*)?$/, "", s); gsub(/[ \t]/, "", s); return s
    }
    function flush() { while (blanks > 0) { print ""; blanks-- } }
    function emit(   n, parts, i, out) {
      n = split(want, parts, ",")
      out = ""
      for (i = 1; i <= nkeep; i++) out = out (out == "" ? "" : ", ") "\"" keep[i] "\""
      for (i = 1; i <= n; i++) out = out (out == "" ? "" : ", ") "\"" parts[i] "\""
      print "default_ulimits = [" out "]"
      done = 1
    }
    function collect(text,   s, v, name) {
      # pull every "..." or '\''...'\'' string out of text
      s = text
      while (match(s, /"[^"]*"|'\''[^'\'']*'\''/)) {
        v = substr(s, RSTART + 1, RLENGTH - 2)
        s = substr(s, RSTART + RLENGTH)
        name = v; sub(/=.*/, "", name)
        if (name != "nofile" && name != "nproc") keep[++nkeep] = v
      }
    }
    BEGIN { section = ""; seen_containers = 0; done = 0; inval = 0; nkeep = 0; blanks = 0 }
    inval {
      buf = buf " " $0
      if ($0 ~ /\]/) { inval = 0; collect(buf); emit() }
      next
    }
    /^[ \t]*$/ { blanks++; next }
    !/^[ \t]*\[[^\[\]]+\][ \t]*(#.*)?$/ { flush() }
    /^[ \t]*\[[^\[\]]+\][ \t]*(#.*)?$/ {
      if (section == "containers" && !done) emit()
      flush()
      section = header_name($0)
      if (section == "containers") seen_containers = 1
      print; next
    }
    section == "containers" && !done && /^[ \t]*default_ulimits[ \t]*=/ {
      v = $0; sub(/^[^=]*=/, "", v)
      if (v ~ /\]/) { collect(v); emit() } else { inval = 1; buf = v }
      next
    }
    { print }
    END {
      if (section == "containers" && !done) emit()
      trailing = blanks; flush()
      if (!seen_containers) { if (NR > 0 && !trailing) print ""; print "[containers]"; emit() }
    }
  ' "$CONTAINERS_CONF" > "$tmp"
  if cmp -s "$tmp" "$CONTAINERS_CONF"; then
    rm -f "$tmp"
  else
    log "updating default_ulimits in $CONTAINERS_CONF"
    cat "$tmp" > "$CONTAINERS_CONF"
    rm -f "$tmp"
  fi
}
merge_ulimits

# 5. The API service.
PODMAN_HOST=unix://$PODMAN_SOCK
if ping_host "$PODMAN_HOST"; then done_with "$PODMAN_HOST"; fi

service_pid() {
  local pid
  pid=$(cat "$PODMAN_PIDFILE" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  local cmdline
  cmdline=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) || return 1
  case "$cmdline" in *"system service"*) printf '%s\n' "$pid" ;; *) return 1 ;; esac
}

mkdir -p "$(dirname "$PODMAN_SOCK")" "$(dirname "$PODMAN_LOG")"
if pid=$(service_pid); then
  log "podman system service (pid $pid) is starting; waiting for it"
else
  rm -f "$PODMAN_SOCK"   # stale socket from a service that is gone
  log "starting podman system service on $PODMAN_HOST (log: $PODMAN_LOG)"
  printf '%s starting podman system service\n' "$(date -Is)" >> "$PODMAN_LOG"
  # 9>&- : the service must not inherit (and hold forever) the lock of this script.
  (cd / && exec setsid nohup podman system service --time=0 "$PODMAN_HOST" >> "$PODMAN_LOG" 2>&1 < /dev/null 9>&-) &
  pid=$!
  printf '%s\n' "$pid" > "$PODMAN_PIDFILE"
fi

# Poll the socket until it answers (bounded); stop early if the service died.
deadline=$(( $(date +%s%N) / 1000000 + WAIT_SECONDS * 1000 ))
until ping_host "$PODMAN_HOST"; do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -n 20 "$PODMAN_LOG" >&2 || true
    die "podman system service exited; see $PODMAN_LOG"
  fi
  if [ $(( $(date +%s%N) / 1000000 )) -ge "$deadline" ]; then
    tail -n 20 "$PODMAN_LOG" >&2 || true
    die "podman API at $PODMAN_HOST did not answer /_ping within ${WAIT_SECONDS}s"
  fi
  sleep 0.1
done
done_with "$PODMAN_HOST"
