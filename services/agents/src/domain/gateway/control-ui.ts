import { randomUUID } from 'node:crypto';
import {
  AgentControlError,
  controlUiDeviceSeed,
  deviceKeyOf,
  type OperatorSession,
  openOperatorSession,
} from '@agentyard/agent-gateway';
import type WebSocket from 'ws';
import type { AgentGateway } from './agent-gateway-access.ts';
import { RELAY_BACKLOG_CLOSE, RELAY_BACKLOG_LIMIT_BYTES } from './relay-limits.ts';

/**
 * An agent's own OpenClaw Control UI, opened from the console (issue 20). The browser talks to the
 * platform's proxy only, with its session cookie; the proxy talks to the gateway with the agent's
 * credentials, which never reach the browser:
 * - HTTP (the UI's page, files and `control-ui-config.json`): never relayed. The page runs on the
 *   console's origin, so it is served from the platform's own copy (control-ui-copy.ts), not the agent's.
 * - WebSocket: the browser's `connect` carries no token (it has none) and a device signature that
 *   binds the token it signed with (payload v2/v3), so it cannot be passed on with a token added.
 *   The proxy answers the browser's handshake itself and connects to the gateway as a device of its
 *   own per agent (paired through the admin RPC like the platform's control device), then relays
 *   every later frame both ways untouched.
 */

/** Where an agent's Control UI lives on the platform's web surface (its page served from the platform's copy, its WebSocket relayed to the gateway's root). */
export const controlUiBasePath = (agentId: string) => `/api/control-ui/${agentId}`;

/**
 * The scopes a browser gets through the proxy: OpenClaw's default grant for proxy-enrolled UI devices
 * (`deviceAutoApprove.scopes`). Never `operator.admin` (the gateway's config, which is the platform's,
 * and its shell terminal) nor `operator.pairing` (devices are managed from the console).
 */
export const CONTROL_UI_SCOPES = [
  'operator.read',
  'operator.write',
  'operator.approvals',
  'operator.questions',
] as const;

/** The proxy's device on the agent's gateway (derived from its token, as the platform's control device is). */
export const controlUiDeviceId = (gateway: AgentGateway) =>
  deviceKeyOf(controlUiDeviceSeed(gateway.gatewayToken, gateway.agentId)).id;

/** The client the proxy connects as: the Control UI's own id and mode, so the gateway serves it as one; one platform name, so its pairing stays put. */
const CONTROL_UI_CLIENT = { id: 'openclaw-control-ui', version: '1.0.0', platform: 'web', mode: 'webchat' } as const;

/**
 * The path of a Control UI request, or null when it would leave the agent's base path: the url
 * normalized as a browser or gateway reads it (WHATWG URL: dot segments, `%2e`, backslashes).
 */
export function controlUiUpstreamPath(rawUrl: string, agentId: string): string | null {
  let url: URL;
  try {
    url = new URL(rawUrl, 'http://gateway.invalid');
  } catch {
    return null;
  }
  const base = controlUiBasePath(agentId);
  if (url.origin !== 'http://gateway.invalid' || (url.pathname !== base && !url.pathname.startsWith(`${base}/`)))
    return null;
  return `${url.pathname}${url.search}`;
}

/** hello-ok as the browser receives it: without the device tokens the gateway issued to the proxy's device (reusable credentials). */
function helloForBrowser(hello: Record<string, unknown>): Record<string, unknown> {
  const auth = hello.auth;
  if (auth === null || typeof auth !== 'object') return hello;
  const { deviceToken: _token, deviceTokens: _tokens, ...kept } = auth as Record<string, unknown>;
  return { ...hello, auth: kept };
}

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
/** A close code ws may send to the browser; anything else (1005, 1006, out of range) as 1011. */
const browserCloseCode = (code: number) =>
  (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999)
    ? code
    : 1011;
/** A close code a client WebSocket may send to the gateway: 1000 or 3000-4999 only. */
const gatewayCloseCode = (code: number) => (code >= 3000 && code <= 4999 ? code : 1000);

export interface ControlUiRelayOptions {
  /** The console's origin, sent to the gateway as the browser origin it allows (`gateway.controlUi.allowedOrigins`); the edge already refused any other. */
  consoleOrigin: string;
  /** How long the browser has to send its `connect`, and the gateway to answer the proxy's. */
  connectTimeoutMs: number;
  log: { warn(obj: object, msg: string): void };
}

/** Relays one browser's Control UI WebSocket to the agent's gateway (see the top of this file). */
export function relayControlUiSession(browser: WebSocket, gateway: AgentGateway, options: ControlUiRelayOptions): void {
  let upstream: OperatorSession['socket'] | null = null;
  let connectId: string | null = null;
  const early: [WebSocket.RawData, boolean][] = [];
  const refuse = (code: number, reason: string) => {
    if (browser.readyState === browser.OPEN) browser.close(code, reason);
  };
  const deadline = setTimeout(() => refuse(1008, 'connect expected'), options.connectTimeoutMs);
  // A challenge of the proxy's own: the browser's signature is not checked (the gateway checks the proxy's).
  browser.send(
    JSON.stringify({ type: 'event', event: 'connect.challenge', payload: { nonce: randomUUID(), ts: Date.now() } }),
  );

  browser.on('message', (data, binary) => {
    if (upstream) return upstream.send(binary ? new Uint8Array(data as Buffer) : data.toString());
    if (connectId !== null) return void early.push([data, binary]);
    clearTimeout(deadline);
    let frame: Record<string, unknown> = {};
    try {
      if (!binary) frame = record(JSON.parse(data.toString()));
    } catch {
      /* refused below */
    }
    if (frame.type !== 'req' || frame.method !== 'connect' || typeof frame.id !== 'string')
      return refuse(1008, 'connect expected');
    connectId = frame.id;
    const caps = record(frame.params).caps;
    void openUpstream(Array.isArray(caps) ? caps.filter((c) => typeof c === 'string').slice(0, 64) : []);
  });
  browser.on('close', (code) => {
    clearTimeout(deadline);
    if (upstream && (upstream.readyState === upstream.OPEN || upstream.readyState === upstream.CONNECTING))
      upstream.close(gatewayCloseCode(code));
  });

  async function openUpstream(caps: string[]) {
    let session: OperatorSession;
    try {
      session = await openOperatorSession(
        {
          baseUrl: gateway.baseUrl,
          gatewayToken: gateway.gatewayToken,
          deviceSeed: controlUiDeviceSeed(gateway.gatewayToken, gateway.agentId),
          connectTimeoutMs: options.connectTimeoutMs,
        },
        { client: CONTROL_UI_CLIENT, scopes: CONTROL_UI_SCOPES, caps, origin: options.consoleOrigin },
      );
    } catch (error) {
      // The gateway's code only: its message and details may name the proxy's device or request.
      const code = error instanceof AgentControlError ? error.code : 'UNAVAILABLE';
      options.log.warn(
        { agentId: gateway.agentId, code, err: (error as Error).message },
        "control UI: the gateway refused the proxy's connect",
      );
      if (browser.readyState === browser.OPEN) {
        browser.send(
          JSON.stringify({
            type: 'res',
            id: connectId,
            ok: false,
            error: { code, message: 'Agent gateway unavailable' },
          }),
        );
        browser.close(1011, 'agent gateway unavailable');
      }
      return;
    }
    const socket = session.socket;
    if (browser.readyState !== browser.OPEN) return socket.close();
    socket.binaryType = 'arraybuffer';
    upstream = socket;
    browser.send(JSON.stringify({ type: 'res', id: connectId, ok: true, payload: helloForBrowser(session.hello) }));
    for (const [data, binary] of early.splice(0))
      socket.send(binary ? new Uint8Array(data as Buffer) : data.toString());
    socket.addEventListener('message', (event) => {
      if (browser.readyState !== browser.OPEN) return;
      // A browser that does not keep up is cut off rather than buffered for without end.
      if (browser.bufferedAmount > RELAY_BACKLOG_LIMIT_BYTES) return refuse(RELAY_BACKLOG_CLOSE, 'too far behind');
      if (typeof event.data === 'string') browser.send(event.data);
      else browser.send(Buffer.from(event.data as ArrayBuffer), { binary: true });
    });
    socket.addEventListener('close', (event) => refuse(browserCloseCode(event.code), event.reason));
    socket.addEventListener('error', () => refuse(1011, 'agent gateway unavailable'));
  }
}
