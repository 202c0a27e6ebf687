/**
 * The scripts a user pipes into `sh` on their own machine to link an OpenClaw to their account
 * (GET /install, GET /link). They read the user's key from AGENTYARD_API_KEY (never an argument:
 * arguments show in the process list), hand it to curl on stdin, keep it in a file only the user
 * may read, and write a heartbeat script for cron beside it. `baseUrl` is the platform's web
 * surface (PUBLIC_BASE_URL), quoted for the shell; AGENTYARD_URL overrides it (the platform reached by
 * another name).
 */

const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

const COMMON = String.raw`set -eu
STATE_DIR="${'$'}{AGENTYARD_HOME:-${'$'}HOME/.agentyard}"
KEY="${'$'}{AGENTYARD_API_KEY:-}"
case "${'$'}KEY" in
  sk_*) ;;
  *) echo "Set AGENTYARD_API_KEY to one of your keys (sk_..., made on the API keys page)" >&2; exit 2 ;;
esac
case "${'$'}KEY" in
  *[!A-Za-z0-9_-]*) echo "AGENTYARD_API_KEY is not a key this platform made" >&2; exit 2 ;;
esac
command -v curl >/dev/null 2>&1 || { echo "curl is needed" >&2; exit 2; }

# A JSON string of $1: backslashes and quotes escaped, control characters dropped.
json_string() {
  printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
}

# api METHOD PATH BODY: the key goes to curl on stdin, never on its command line.
api() {
  printf 'header = "Authorization: Bearer %s"\n' "${'$'}KEY" | curl -fsS --max-time 20 -K - -X "$1" -H 'content-type: application/json' --data "$3" "${'$'}BASE_URL$2"
}

VERSION=""
if command -v openclaw >/dev/null 2>&1; then VERSION="$(openclaw --version 2>/dev/null | head -n 1 | tr -cd 'A-Za-z0-9._+ -' | cut -c 1-64)"; fi
NAME="$(hostname 2>/dev/null | tr -cd 'A-Za-z0-9._-' | cut -c 1-64)"
BODY="{\"mode\":$(json_string "${'$'}MODE")"
if [ -n "${'$'}NAME" ]; then BODY="${'$'}BODY,\"name\":$(json_string "${'$'}NAME")"; fi
if [ -n "${'$'}VERSION" ]; then BODY="${'$'}BODY,\"version\":$(json_string "${'$'}VERSION")"; fi
if [ -n "${'$'}{GATEWAY_URL:-}" ]; then BODY="${'$'}BODY,\"gatewayUrl\":$(json_string "${'$'}GATEWAY_URL")"; fi
if [ -n "${'$'}{GATEWAY_TOKEN:-}" ]; then BODY="${'$'}BODY,\"gatewayToken\":$(json_string "${'$'}GATEWAY_TOKEN")"; fi
BODY="${'$'}BODY}"

ANSWER="$(api POST "${'$'}REGISTER_PATH" "${'$'}BODY")" || { echo "The platform refused the registration (is the key right?)" >&2; exit 1; }
ID="$(printf '%s' "${'$'}ANSWER" | sed -n 's/.*"installationId":"\([0-9a-f-]*\)".*/\1/p')"
DASHBOARD="$(printf '%s' "${'$'}ANSWER" | sed -n 's/.*"dashboardUrl":"\([^"]*\)".*/\1/p')"
[ -n "${'$'}ID" ] || { echo "Unexpected answer from the platform" >&2; exit 1; }

umask 077
mkdir -p "${'$'}STATE_DIR"
printf '%s\n' "${'$'}KEY" > "${'$'}STATE_DIR/key"
printf '%s\n' "${'$'}ID" > "${'$'}STATE_DIR/installation"
cat > "${'$'}STATE_DIR/heartbeat.sh" <<HEARTBEAT
#!/bin/sh
# Tells the platform this installation is alive; cron runs it every 5 minutes.
set -eu
KEY="\$(cat "${'$'}STATE_DIR/key")"
VERSION=""
if command -v openclaw >/dev/null 2>&1; then VERSION="\$(openclaw --version 2>/dev/null | head -n 1 | tr -cd 'A-Za-z0-9._+ -' | cut -c 1-64)"; fi
BODY='{}'
if [ -n "\$VERSION" ]; then BODY="{\"version\":\"\$VERSION\"}"; fi
printf 'header = "Authorization: Bearer %s"\n' "\$KEY" | curl -fsS --max-time 20 -K - -X POST -H 'content-type: application/json' --data "\$BODY" '${'$'}BASE_URL/api/installations/${'$'}ID/heartbeat' >/dev/null
HEARTBEAT
chmod 700 "${'$'}STATE_DIR/heartbeat.sh"
"${'$'}STATE_DIR/heartbeat.sh"

echo "Linked: installation ${'$'}ID"
echo "See it at ${'$'}DASHBOARD"
echo "Keep it shown as online with this cron line (crontab -e):"
echo "*/5 * * * * ${'$'}STATE_DIR/heartbeat.sh"
`;

/** GET /install: this machine's OpenClaw, registered as a home installation (local unless OPENCLAW_GATEWAY_URL names where it listens). */
export function installScript(baseUrl: string): string {
  return `#!/bin/sh
# Agentyard: register the OpenClaw on this machine as a home installation of your account.
#   curl -fsSL ${baseUrl}/install | AGENTYARD_API_KEY=sk_... sh
BASE_URL="\${AGENTYARD_URL:-${shellQuote(baseUrl)}}"
REGISTER_PATH=/api/register-home
GATEWAY_URL="\${OPENCLAW_GATEWAY_URL:-}"
GATEWAY_TOKEN="\${OPENCLAW_GATEWAY_TOKEN:-}"
if [ -n "$GATEWAY_URL" ]; then MODE=remote; else MODE=local; fi
${COMMON}`;
}

/** GET /link: an OpenClaw gateway already running somewhere, linked by its URL and token. */
export function linkScript(baseUrl: string): string {
  return `#!/bin/sh
# Agentyard: link an OpenClaw gateway that already runs (OPENCLAW_GATEWAY_URL, OPENCLAW_GATEWAY_TOKEN) to your account.
#   curl -fsSL ${baseUrl}/link | AGENTYARD_API_KEY=sk_... OPENCLAW_GATEWAY_URL=https://... OPENCLAW_GATEWAY_TOKEN=... sh
BASE_URL="\${AGENTYARD_URL:-${shellQuote(baseUrl)}}"
REGISTER_PATH=/api/register-link
GATEWAY_URL="\${OPENCLAW_GATEWAY_URL:-}"
GATEWAY_TOKEN="\${OPENCLAW_GATEWAY_TOKEN:-}"
[ -n "$GATEWAY_URL" ] || { echo "Set OPENCLAW_GATEWAY_URL to where the gateway listens" >&2; exit 2; }
MODE=remote
${COMMON}`;
}
