import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  randomUUID,
  sign,
} from 'node:crypto';
import { fetchWithTimeout } from '@agentyard/http';
import WebSocket from 'ws';
import { AgentGatewayError, readAgentAnswer } from './client.ts';

/**
 * The OpenClaw gateway's WebSocket control plane (protocol 4, openclaw@2026.9.6): a `connect.challenge`
 * event, a signed `connect` request, then `{type:'req'}` / `{type:'res'}` frames.
 *
 * A shared-token connection from outside the container (the platform's is never loopback) gets no
 * scopes unless it carries a paired device identity, so the platform connects as its own device per
 * agent (an Ed25519 key derived from a platform secret and the agent id) and, the first time, approves
 * that device's pairing request through the gateway's admin HTTP RPC (`/api/v1/admin/rpc`, where the
 * shared token is full operator access; the `admin-http-rpc` plugin, enabled in every agent's config).
 */

export const PROTOCOL_VERSION = 4;
/**
 * Largest frame read from an agent's control plane (8 MB: a page of chat history, a memory file):
 * the socket refuses a larger one from its header (close 1009), so a tenant's gateway cannot make
 * the platform buffer what it likes.
 */
export const CONTROL_FRAME_LIMIT_BYTES = 8 * 1024 * 1024;
/** WebSocket close code for a frame over the limit (RFC 6455 "message too big"). */
const MESSAGE_TOO_BIG = 1009;
const SCOPES = ['operator.read', 'operator.write', 'operator.admin', 'operator.pairing'] as const;
const CLIENT = { id: 'gateway-client', version: '1.0.0', platform: 'linux', mode: 'backend' } as const;

export interface AgentFileMeta {
  name: string;
  path: string;
  missing: boolean;
  size?: number;
  updatedAtMs?: number;
}
export interface AgentFile extends AgentFileMeta {
  content?: string;
  hash?: string;
}
export interface SkillStatus {
  name: string;
  description?: string;
  source?: string;
  bundled?: boolean;
  disabled?: boolean;
  eligible?: boolean;
  skillKey?: string;
  filePath?: string;
}
/** What the gateway tells of a device, pending or paired. */
interface DeviceDescription {
  deviceId: string;
  clientId?: string;
  clientMode?: string;
  platform?: string;
  displayName?: string;
  role?: string;
  scopes?: string[];
  remoteIp?: string;
}
export interface PairingRequest extends DeviceDescription {
  requestId: string;
  ts?: number;
}
export interface PairedDevice extends DeviceDescription {
  createdAtMs?: number;
  approvedAtMs?: number;
}
export interface WorkspaceEntry {
  path: string;
  name?: string;
  kind?: string;
  size?: number;
  updatedAtMs?: number;
}

/** One account of a channel as the gateway reports it (`channels.status`); more fields than these may come. */
export interface ChannelAccountStatus {
  accountId?: string;
  enabled?: boolean;
  configured?: boolean;
  running?: boolean;
  connected?: boolean;
  lastError?: string | null;
  healthState?: string;
  stateReason?: string;
}

/** The control-plane methods the platform calls, with their params and results. */
export interface ControlMethods {
  'agents.files.list': {
    params: { agentId: string };
    result: { agentId: string; workspace: string; files: AgentFileMeta[] };
  };
  'agents.files.get': { params: { agentId: string; name: string }; result: { agentId: string; file: AgentFile } };
  'agents.files.set': {
    params: { agentId: string; name: string; content: string; expectedHash?: string };
    result: { ok?: boolean; agentId: string; file: AgentFile };
  };
  'agents.workspace.list': {
    params: { agentId: string; path?: string };
    result: { entries?: WorkspaceEntry[] } & Record<string, unknown>;
  };
  'agents.workspace.get': {
    params: { agentId: string; path: string };
    result: {
      agentId?: string;
      file?: { path?: string; content?: string; encoding?: string; size?: number; updatedAtMs?: number };
    };
  };
  'skills.status': { params: { agentId?: string }; result: { workspaceDir: string; skills: SkillStatus[] } };
  'skills.update': { params: { skillKey: string; enabled?: boolean }; result: Record<string, unknown> };
  'device.pair.list': { params: Record<string, never>; result: { pending: PairingRequest[]; paired: PairedDevice[] } };
  'device.pair.approve': { params: { requestId: string }; result: { requestId: string; device: PairedDevice } };
  'device.pair.reject': { params: { requestId: string }; result: Record<string, unknown> };
  'device.pair.remove': { params: { deviceId: string }; result: Record<string, unknown> };
  'config.get': {
    params: Record<string, never>;
    result: { hash?: string; config?: Record<string, unknown> } & Record<string, unknown>;
  };
  'config.patch': { params: { raw: string; baseHash?: string }; result: Record<string, unknown> };
  'channels.status': {
    params: { channel?: string; probe?: boolean; timeoutMs?: number };
    result: { channels?: Record<string, unknown>; channelAccounts?: Record<string, ChannelAccountStatus[]> } & Record<
      string,
      unknown
    >;
  };
  'chat.history': {
    params: { sessionKey: string; limit?: number; offset?: number };
    result: { sessionKey?: string; messages?: unknown[]; hasMore?: boolean; totalMessages?: number } & Record<
      string,
      unknown
    >;
  };
}
export type ControlMethod = keyof ControlMethods;

export interface ControlTarget {
  /** The agent gateway's base URL as the platform reaches it (http://host:port). */
  baseUrl: string;
  gatewayToken: string;
  /** The platform's device seed for this agent (see platformDeviceSeed): the same seed, the same paired device. */
  deviceSeed: Buffer;
  /** Deadline of the connect (challenge, pairing, hello). */
  connectTimeoutMs?: number;
  /** Largest frame read from the gateway (default CONTROL_FRAME_LIMIT_BYTES); a larger one closes the connection. */
  maxFrameBytes?: number;
}

/** A gateway error frame (`{code, message, details}`) as an AgentGatewayError. */
export class AgentControlError extends AgentGatewayError {
  override name = 'AgentControlError';
  readonly code: string;
  readonly details: Record<string, unknown>;
  constructor(code: string, message: string, details: Record<string, unknown> = {}, status?: number) {
    super(message, status);
    this.code = code;
    this.details = details;
  }
}

/** The per-agent device seed: HMAC(platform secret, agent id), so no key is stored and none is shared between agents. */
export function platformDeviceSeed(platformSecret: string, agentId: string): Buffer {
  return createHmac('sha256', platformSecret).update(`agentyard-control-device:${agentId}`).digest();
}

/** The seed of the device the platform's Control UI proxy connects browsers as: its own pairing, with its own (narrower) scopes. */
export function controlUiDeviceSeed(platformSecret: string, agentId: string): Buffer {
  return createHmac('sha256', platformSecret).update(`agentyard-control-ui-device:${agentId}`).digest();
}

interface DeviceKey {
  id: string;
  publicKey: string;
  privateKey: KeyObject;
}

// PKCS#8 prefix of a raw 32-byte Ed25519 seed (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The Ed25519 device of a seed: its id is the SHA-256 of the raw public key (OpenClaw's device fingerprint). */
export function deviceKeyOf(seed: Buffer): DeviceKey {
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const raw = createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(-32);
  return { id: createHash('sha256').update(raw).digest('hex'), publicKey: raw.toString('base64url'), privateKey };
}

/** Why a control connection closed: a frame over the limit names the limit, anything else its code. */
const closedError = (code: number, maxFrameBytes: number, what: string) =>
  code === MESSAGE_TOO_BIG
    ? new AgentGatewayError(`gateway sent a frame larger than ${maxFrameBytes} bytes`, undefined, maxFrameBytes)
    : new AgentGatewayError(`${what} (${code})`);

/** A socket error: a frame over the limit (refused from its header, before its payload is read) names the limit. */
const socketError = (event: WebSocket.ErrorEvent, maxFrameBytes: number) =>
  (event.error as { code?: string } | undefined)?.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'
    ? closedError(MESSAGE_TOO_BIG, maxFrameBytes, 'control connection closed')
    : new AgentGatewayError('control connection failed');

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/**
 * One gateway method through the admin HTTP RPC (bearer = the agent's gateway token): the path that
 * needs no paired device, used to approve the platform's own device and for the methods it allows.
 */
export async function callAdminRpc<M extends ControlMethod>(
  target: Pick<ControlTarget, 'baseUrl' | 'gatewayToken'>,
  method: M,
  params: ControlMethods[M]['params'],
  timeoutMs = 10_000,
): Promise<ControlMethods[M]['result']> {
  let response: Response;
  try {
    response = await fetchWithTimeout(new URL('/api/v1/admin/rpc', target.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.gatewayToken}` },
      body: JSON.stringify({ method, params }),
      timeoutMs,
    });
  } catch (error) {
    throw new AgentGatewayError(
      `${method}: ${(error as Error).name === 'TimeoutError' ? `timed out after ${timeoutMs} ms` : 'connection failed'}`,
    );
  }
  const text = await readAgentAnswer(response.body, response.headers.get('content-length'));
  let body: Record<string, unknown>;
  try {
    body = record(JSON.parse(text));
  } catch {
    throw new AgentGatewayError(`${method} answered ${response.status} without JSON`, response.status);
  }
  if (body.ok !== true) {
    const error = record(body.error);
    throw new AgentControlError(
      String(error.code ?? 'UNAVAILABLE'),
      String(error.message ?? `${method} answered ${response.status}`),
      record(error.details),
      response.status,
    );
  }
  return body.payload as ControlMethods[M]['result'];
}

/** Who a session connects as: the client it names, the scopes it asks for, the capabilities it offers and the browser origin it carries (none for the platform's own). */
export interface OperatorSessionOptions {
  client: { id: string; version: string; platform: string; mode: string };
  scopes: readonly string[];
  caps?: readonly unknown[];
  origin?: string;
}

/** An authenticated connection to a gateway and the gateway's `hello-ok` payload for it. */
export interface OperatorSession {
  socket: WebSocket;
  hello: Record<string, unknown>;
  deviceId: string;
}

/**
 * Connects as the device of `target.deviceSeed` and authenticates with the shared token; pairs the
 * device on first use (one approval through the admin RPC, then one retry).
 */
export async function openOperatorSession(
  target: ControlTarget,
  options: OperatorSessionOptions,
): Promise<OperatorSession> {
  const device = deviceKeyOf(target.deviceSeed);
  const timeoutMs = target.connectTimeoutMs ?? 15_000;
  try {
    return await handshake(target, device, options, timeoutMs);
  } catch (error) {
    const requestId =
      error instanceof AgentControlError && error.details.code === 'PAIRING_REQUIRED'
        ? error.details.requestId
        : undefined;
    if (typeof requestId !== 'string') throw error;
    await callAdminRpc(target, 'device.pair.approve', { requestId }, timeoutMs);
    return handshake(target, device, options, timeoutMs);
  }
}

function handshake(
  target: ControlTarget,
  device: DeviceKey,
  options: OperatorSessionOptions,
  timeoutMs: number,
): Promise<OperatorSession> {
  const url = new URL(target.baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const maxPayload = target.maxFrameBytes ?? CONTROL_FRAME_LIMIT_BYTES;
  const socket = new WebSocket(url, { maxPayload, ...(options.origin ? { headers: { origin: options.origin } } : {}) });
  return new Promise<OperatorSession>((resolve, reject) => {
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.close();
      reject(error);
    };
    const timer = setTimeout(() => fail(new AgentGatewayError(`connect timed out after ${timeoutMs} ms`)), timeoutMs);
    const connectId = randomUUID();
    const { client, scopes } = options;
    const onMessage = (event: WebSocket.MessageEvent) => {
      let frame: Record<string, unknown>;
      try {
        frame = record(JSON.parse(String(event.data)));
      } catch {
        return fail(new AgentGatewayError('gateway sent a frame that is not JSON'));
      }
      if (frame.type === 'event' && frame.event === 'connect.challenge') {
        const { nonce, ts } = record(frame.payload);
        if (typeof nonce !== 'string' || typeof ts !== 'number')
          return fail(new AgentGatewayError('gateway sent a malformed challenge'));
        const signed = [
          'v2',
          device.id,
          client.id,
          client.mode,
          'operator',
          scopes.join(','),
          String(ts),
          target.gatewayToken,
          nonce,
        ].join('|');
        socket.send(
          JSON.stringify({
            type: 'req',
            id: connectId,
            method: 'connect',
            params: {
              minProtocol: PROTOCOL_VERSION,
              maxProtocol: PROTOCOL_VERSION,
              client,
              role: 'operator',
              scopes,
              caps: options.caps ?? [],
              auth: { token: target.gatewayToken },
              device: {
                id: device.id,
                publicKey: device.publicKey,
                signature: sign(null, Buffer.from(signed), device.privateKey).toString('base64url'),
                signedAt: ts,
                nonce,
              },
            },
          }),
        );
      } else if (frame.type === 'res' && frame.id === connectId) {
        clearTimeout(timer);
        socket.removeEventListener('message', onMessage);
        socket.removeEventListener('close', onClose);
        if (frame.ok !== true) {
          const error = record(frame.error);
          socket.close();
          return reject(
            new AgentControlError(
              String(error.code ?? 'UNAVAILABLE'),
              String(error.message ?? 'connect refused'),
              record(error.details),
            ),
          );
        }
        resolve({ socket, hello: record(frame.payload), deviceId: device.id });
      }
    };
    const onClose = (event: WebSocket.CloseEvent) =>
      fail(closedError(event.code, maxPayload, 'gateway closed the connection during connect'));
    socket.addEventListener('message', onMessage);
    socket.addEventListener('close', onClose);
    socket.addEventListener('error', (event) => fail(socketError(event, maxPayload)), { once: true });
  });
}

/** A connected control-plane session with one agent's gateway. */
export class AgentControlClient {
  readonly #socket: WebSocket;
  readonly #pending = new Map<
    string,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }
  >();
  #closed: Error | null = null;
  /** The scopes the gateway granted this connection (hello-ok.auth.scopes). */
  readonly scopes: string[];
  /** The platform's own device id on this gateway (left out of the user's device lists). */
  readonly deviceId: string;

  private constructor(socket: WebSocket, scopes: string[], deviceId: string, maxFrameBytes: number) {
    this.#socket = socket;
    this.scopes = scopes;
    this.deviceId = deviceId;
    socket.addEventListener('message', (event) => this.#onFrame(String(event.data)));
    socket.addEventListener('close', (event) =>
      this.#fail(closedError(event.code, maxFrameBytes, 'control connection closed')),
    );
    socket.addEventListener('error', (event) => this.#fail(socketError(event, maxFrameBytes)));
  }

  /** Connects and authenticates as the platform's own device (full operator scopes). */
  static async connect(target: ControlTarget): Promise<AgentControlClient> {
    const { socket, hello, deviceId } = await openOperatorSession(target, { client: CLIENT, scopes: SCOPES });
    const scopes = record(hello.auth).scopes;
    return new AgentControlClient(
      socket,
      Array.isArray(scopes) ? scopes.map(String) : [],
      deviceId,
      target.maxFrameBytes ?? CONTROL_FRAME_LIMIT_BYTES,
    );
  }

  /** Calls `method`; rejects with AgentControlError on an error frame, AgentGatewayError on timeout or a lost connection. */
  call<M extends ControlMethod>(
    method: M,
    params: ControlMethods[M]['params'],
    timeoutMs = 10_000,
  ): Promise<ControlMethods[M]['result']> {
    if (this.#closed) return Promise.reject(this.#closed);
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new AgentGatewayError(`${method} timed out after ${timeoutMs} ms`, 504));
      }, timeoutMs);
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.#socket.send(JSON.stringify({ type: 'req', id, method, params }));
    });
  }

  close(): void {
    this.#fail(new AgentGatewayError('control connection closed'));
    if (this.#socket.readyState === WebSocket.OPEN || this.#socket.readyState === WebSocket.CONNECTING)
      this.#socket.close();
  }

  #onFrame(data: string) {
    let frame: Record<string, unknown>;
    try {
      frame = record(JSON.parse(data));
    } catch {
      return;
    }
    if (frame.type !== 'res' || typeof frame.id !== 'string') return; // events are not this client's business
    const waiter = this.#pending.get(frame.id);
    if (!waiter) return;
    this.#pending.delete(frame.id);
    clearTimeout(waiter.timer);
    if (frame.ok === true) waiter.resolve(frame.payload);
    else {
      const error = record(frame.error);
      waiter.reject(
        new AgentControlError(
          String(error.code ?? 'UNAVAILABLE'),
          String(error.message ?? 'request failed'),
          record(error.details),
        ),
      );
    }
  }

  #fail(error: Error) {
    if (this.#closed) return;
    this.#closed = error;
    for (const [id, waiter] of this.#pending) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
      this.#pending.delete(id);
    }
  }
}

/** Connects, runs `work` with the client, always closes. */
export async function withAgentControl<T>(
  target: ControlTarget,
  work: (client: AgentControlClient) => Promise<T>,
): Promise<T> {
  const client = await AgentControlClient.connect(target);
  try {
    return await work(client);
  } finally {
    client.close();
  }
}
