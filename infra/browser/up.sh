#!/usr/bin/env bash
# Makes Debian's Chromium available for the console's browser tests (playwright-core drives it).
#
# Idempotent: when the package is installed, a second run only checks and returns at once.
# Progress goes to stderr; the last stdout line is the browser's path.
# Under a lock, so parallel test runs do not run apt-get twice.
set -euo pipefail

log() { echo "[browser] $*" >&2; }
die() { echo "[browser] error: $*" >&2; exit 1; }

BROWSER=/usr/bin/chromium
pkg_installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }

if ! pkg_installed chromium || [ ! -x "$BROWSER" ]; then
  command -v apt-get >/dev/null || die "no apt-get here: install Chromium yourself and set CHROMIUM_PATH"
  mkdir -p /run/lock
  exec 9>/run/lock/agentyard-browser.lock
  flock -w 600 9 || die "another up.sh holds /run/lock/agentyard-browser.lock"
  if ! pkg_installed chromium; then
    log "installing chromium (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    # No recommended packages: the browser and its libraries are enough headless.
    apt-get install -y -qq --no-install-recommends chromium >&2
  fi
fi
[ -x "$BROWSER" ] || die "$BROWSER not found after installation"
echo "$BROWSER"
