#!/usr/bin/env bash
# Builds Kubernetes 1.20.2 server binaries from Debian bookworm's `kubernetes` source package with
# Debian's Go (no registry or module proxy is reachable here; the source vendors its dependencies).
# The system's apt configuration is never touched: a private sources list and lists directory.
# Cached under $CACHE (binaries, source and Go build cache): a second run returns in seconds.
# Prints the directory holding the binaries on stdout.
set -euo pipefail

CACHE=${AGENTYARD_K8S_CACHE:-/var/cache/agentyard/kubernetes}
PKG_VERSION_PREFIX=1.20
WHAT=(kube-apiserver kube-controller-manager kube-scheduler kubelet)
BIN=$CACHE/bin

log() { printf 'kubernetes-build: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

have_all() { for b in "${WHAT[@]}"; do [ -x "$BIN/$b" ] || return 1; done; }
if have_all; then echo "$BIN"; exit 0; fi

need() { command -v "$1" >/dev/null || { log "installing $2"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >&2; }; }
need go golang-go
need make make
need dpkg-source dpkg-dev
need rsync rsync

mkdir -p "$CACHE/apt/lists/partial" "$CACHE/src" "$BIN"
# One build at a time on the machine: a second caller waits for the first and finds its binaries.
exec 9>"$CACHE/build.lock"
flock 9
if have_all; then echo "$BIN"; exit 0; fi
# Same mirror and snapshot as the machine's own list; only deb-src lines, in a private file.
mirror=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
cat >"$CACHE/apt/sources.list" <<LIST
deb-src $mirror bookworm main
deb-src ${mirror%/debian}/debian-security bookworm-security main
LIST
APT_OPTS=(-o "Dir::Etc::SourceList=$CACHE/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$CACHE/apt/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)

srcdir=$(find "$CACHE/src" -mindepth 1 -maxdepth 1 -type d -name "kubernetes-${PKG_VERSION_PREFIX}*" | head -1)
if [ -z "$srcdir" ]; then
  log "fetching the kubernetes source package (private sources list)"
  apt-get "${APT_OPTS[@]}" update -qq >&2
  (cd "$CACHE/src" && apt-get "${APT_OPTS[@]}" source --download-only kubernetes >&2)
  dsc=$(ls "$CACHE"/src/kubernetes_*.dsc | head -1)
  [ -n "$dsc" ] || die "no kubernetes .dsc downloaded"
  (cd "$CACHE/src" && dpkg-source --no-check -x "$(basename "$dsc")" >&2)
  srcdir=$(find "$CACHE/src" -mindepth 1 -maxdepth 1 -type d -name "kubernetes-${PKG_VERSION_PREFIX}*" | head -1)
  [ -n "$srcdir" ] || die "unpacking gave no kubernetes-${PKG_VERSION_PREFIX}* directory"
fi

# Kubernetes 1.20 vendors modern-go/reflect2 1.0.1, whose map iteration breaks with Go >= 1.18
# (kube-apiserver dies with "unexpected fault address" in mapiterinit under json-iterator).
# Debian's golang-github-modern-go-reflect2-dev 1.0.2 has the fix: it replaces the vendored copy.
reflect2=$srcdir/vendor/github.com/modern-go/reflect2
if ! grep -q 'agentyard: reflect2 1.0.2' "$reflect2/.agentyard" 2>/dev/null; then
  need_pkg() { dpkg -s "$1" >/dev/null 2>&1 || { log "installing $1"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$1" >&2; }; }
  need_pkg golang-github-modern-go-reflect2-dev
  log "replacing the vendored reflect2 1.0.1 with Debian's 1.0.2 (Go >= 1.18)"
  # Sources only: a go.mod inside vendor/ would mark a module boundary.
  rsync -a --delete --exclude .agentyard --exclude go.mod --exclude go.sum --exclude "*_test.go" /usr/share/gocode/src/github.com/modern-go/reflect2/ "$reflect2/"
  echo 'agentyard: reflect2 1.0.2' >"$reflect2/.agentyard"
  rm -f "$BIN"/*
fi

log "building ${WHAT[*]} in $srcdir (cold: 8 min on 2 idle cores, 29 min on a busy machine; warm: under a minute)"
start=$(date +%s)
export GOCACHE=$CACHE/gocache GOPATH=$CACHE/gopath GOFLAGS=-mod=vendor GOPROXY=off CGO_ENABLED=0
targets=(); for b in "${WHAT[@]}"; do targets+=("cmd/$b"); done
(cd "$srcdir" && make WHAT="${targets[*]}" >&2)
for b in "${WHAT[@]}"; do
  f=$(find "$srcdir/_output" -type f -name "$b" -path '*/bin/*' | head -1)
  [ -n "$f" ] || die "build produced no $b"
  install -m 0755 "$f" "$BIN/$b"
done
log "built in $(( $(date +%s) - start )) s"
echo "$BIN"
