import t from 'tap';
import { logRedactor } from '../../src/domain/telemetry/log-redaction.ts';

// What an agent prints passes this before it leaves the platform. The real OpenClaw colours its
// output (seen in agent-work-journey.test.ts), so secrets arrive wrapped in terminal escape codes.
const colour = (code: number, text: string) => `\u001b[${code}m${text}\u001b[39m`;

t.test("an agent's own secrets and credential shapes are redacted", async (t) => {
  const redact = logRedactor(['gateway-token-1234567890', null, undefined, 'short']);
  t.equal(redact('token gateway-token-1234567890 ok'), 'token [redacted] ok', 'its own secret, wherever it is');
  t.equal(redact('Authorization: Bearer abcdefghijklmnop'), 'Authorization: Bearer [redacted]');
  t.equal(redact('key ag_abcdefghijklmnopqrstuvwx'), 'key [redacted]', 'an agent key');
  t.equal(redact('api_key: "abcdefghijklmnop"'), 'api_key: "[redacted]"', 'an assignment');
  t.equal(
    redact('short is not treated as a secret'),
    'short is not treated as a secret',
    'secrets under 8 characters are ignored',
  );
});

t.test('coloured output: escape codes are removed, so a coloured value is still redacted', async (t) => {
  const redact = logRedactor(['gateway-token-1234567890']);
  t.equal(
    redact(`api_key=${colour(32, 'ABCDEFGHIJKLMNOPQRST')}`),
    'api_key=[redacted]',
    'an assignment with a coloured value',
  );
  t.equal(
    redact(`${colour(36, 'Authorization: Bearer')} ${colour(33, 'ABCDEFGHIJKLMNOPQRST')}`),
    'Authorization: Bearer [redacted]',
    'a bearer with a coloured token',
  );
  t.equal(redact(`gateway-token-${colour(1, '1234567890')}`), '[redacted]', 'its own secret split by a colour change');
  t.equal(
    redact(`${colour(90, '2026-11-26T12:02:09.476+00:00')} ${colour(36, '[gateway]')} ${colour(36, 'ready')}`),
    '2026-11-26T12:02:09.476+00:00 [gateway] ready',
    "a line of OpenClaw's, as text",
  );
});
