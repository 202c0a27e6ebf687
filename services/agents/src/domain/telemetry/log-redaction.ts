import { stripVTControlCharacters } from 'node:util';

/** What a redacted secret reads as. */
export const REDACTED = '[redacted]';

/**
 * Shapes of credentials whatever agent they belong to: bearer and basic authorizations, the
 * platform's agent keys (`ag_`), user API keys (`sk_`, `sk-`), and `token=`/`key:` style assignments.
 */
const SHAPES: [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [/\b(ag|sk)[_-][A-Za-z0-9_-]{16,}/g, REDACTED],
  [
    /\b((?:[a-z]+[_-])?(?:token|secret|api[_-]?key|password))(["']?\s*[:=]\s*["']?)[A-Za-z0-9._~+/=-]{12,}/gi,
    `$1$2${REDACTED}`,
  ],
];

/**
 * A redactor for one agent's output: its own secrets (gateway token, hooks token, AI key) wherever
 * they appear, then anything shaped like a credential. Every line leaves the platform through one.
 * Terminal escape codes go first (OpenClaw colours its output): a coloured value would otherwise
 * split a credential from its `Bearer` or `token=`, and they mean nothing outside a terminal.
 */
export function logRedactor(secrets: readonly (string | null | undefined)[]): (text: string) => string {
  // Longest first, so a secret containing another is removed whole.
  const own = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= 8))].sort(
    (a, b) => b.length - a.length,
  );
  return (text) => {
    let out = stripVTControlCharacters(text);
    for (const secret of own) out = out.split(secret).join(REDACTED);
    for (const [shape, replacement] of SHAPES) out = out.replace(shape, replacement);
    return out;
  };
}
