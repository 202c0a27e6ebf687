// Agentyard minimal gateway: a small, dependency-free stand-in for the OpenClaw gateway
// (openclaw@2026.9.6) for benchmarks and fast tests. It answers the parts of the gateway the
// platform uses the way OpenClaw answers them:
//   GET|HEAD /healthz (/health)   200 {"ok":true,"status":"live"}
//   GET|HEAD /readyz  (/ready)    200 {"ready":true,"failing":[],"uptimeMs":N} (503 while "starting")
//   GET|HEAD /startupz (/startup) 200 {"ok":true,"status":"started","uptimeMs":N}
//   POST <hooks.path>/agent       200 {"ok":true,"runId":"<uuid>"}  (hooks token required)
//   POST <hooks.path>/wake        200 {"ok":true,"mode":"now","eventOutcome":"queued"}
//   WebSocket upgrade on /        RFC 6455 handshake; text and binary messages are echoed back.
// Config: $OPENCLAW_CONFIG_PATH, else ${OPENCLAW_STATE_DIR:-$HOME/.openclaw}/openclaw.json
// (JSON; // and /* */ comments and trailing commas are tolerated). Port: $OPENCLAW_GATEWAY_PORT,
// else gateway.port, else 18789. Extra env: AGENTYARD_MINIMAL_READY_DELAY_MS (report "not ready"
// for that long after start, to exercise readiness polling), AGENTYARD_MINIMAL_LOG=1 (log requests).
// Runs on Node >= 22 (the image ships Node 24). SIGTERM/SIGINT close everything and exit 0.

import http from "node:http";
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const DEFAULT_PORT = 18789;
const DEFAULT_HOOKS_PATH = "/hooks";
const HOOK_MAX_BODY_BYTES = 256 * 1024;
const HOOK_AUTH_FAILURE_LIMIT = 20;
const HOOK_AUTH_FAILURE_WINDOW_MS = 60_000;
const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const WS_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const startedAt = Date.now();
const log = (msg) => process.stdout.write(`[minimal-gateway] ${msg}\n`);
const logRequests = process.env.AGENTYARD_MINIMAL_LOG === "1";

// ---------------------------------------------------------------------------------------------
// Configuration

function stripJsonComments(text) {
  // Removes // and /* */ comments outside strings, then trailing commas before } or ].
  let out = "";
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      out += ch;
      if (ch === "\\") out += text[++i] ?? "";
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (ch === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 1;
      out += " ";
    } else {
      out += ch;
    }
  }
  return out.replace(/,(\s*[}\]])/g, "$1");
}

function loadConfig() {
  const stateDir = process.env.OPENCLAW_STATE_DIR?.trim() || join(process.env.HOME || homedir(), ".openclaw");
  const file = process.env.OPENCLAW_CONFIG_PATH?.trim() || join(stateDir, "openclaw.json");
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if (err.code === "ENOENT") {
      log(`no config at ${file}; starting with defaults (hooks disabled)`);
      return { file, config: {} };
    }
    throw new Error(`cannot read config ${file}: ${err.message}`);
  }
  let config;
  try {
    config = JSON.parse(text);
  } catch {
    try {
      config = JSON.parse(stripJsonComments(text));
    } catch (err) {
      throw new Error(`invalid config ${file}: ${err.message}`);
    }
  }
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    throw new Error(`invalid config ${file}: top level must be an object`);
  }
  return { file, config };
}

const str = (v) => (typeof v === "string" && v.trim() ? v.trim() : undefined);
const isRecord = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

function resolvePort(config) {
  const envRaw = process.env.OPENCLAW_GATEWAY_PORT?.trim();
  if (envRaw) {
    const n = Number(envRaw);
    if (Number.isInteger(n) && n > 0 && n < 65536) return n;
    throw new Error(`invalid OPENCLAW_GATEWAY_PORT: ${envRaw}`);
  }
  const p = config.gateway?.port;
  if (typeof p === "number" && Number.isInteger(p) && p > 0 && p < 65536) return p;
  return DEFAULT_PORT;
}

function resolveHooks(config) {
  const hooks = config.hooks;
  if (!isRecord(hooks) || hooks.enabled !== true) return null;
  const token = str(hooks.token);
  if (!token) throw new Error("hooks.enabled requires hooks.token");
  const raw = str(hooks.path) || DEFAULT_HOOKS_PATH;
  const withSlash = raw.startsWith("/") ? raw : `/${raw}`;
  const basePath = withSlash.length > 1 ? withSlash.replace(/\/+$/, "") : withSlash;
  if (basePath === "/") throw new Error("hooks.path may not be '/'");
  let prefixes;
  if (Array.isArray(hooks.allowedSessionKeyPrefixes)) {
    const set = new Set(hooks.allowedSessionKeyPrefixes.map((p) => str(p)?.toLowerCase()).filter(Boolean));
    prefixes = set.size > 0 ? [...set] : undefined;
  }
  return {
    basePath,
    tokenDigest: createHash("sha256").update(token).digest(),
    allowRequestSessionKey: hooks.allowRequestSessionKey === true,
    allowedSessionKeyPrefixes: prefixes,
    defaultSessionKey: str(hooks.defaultSessionKey),
  };
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

// Headers OpenClaw sets on every HTTP response.
const COMMON_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Permissions-Policy": "camera=(), microphone=(self), geolocation=()",
};

function sendJson(res, status, body, extraHeaders = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...COMMON_HEADERS,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    ...extraHeaders,
  });
  res.end(res.req.method === "HEAD" ? undefined : text);
}

function sendText(res, status, text, extraHeaders = {}) {
  res.writeHead(status, {
    ...COMMON_HEADERS,
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    ...extraHeaders,
  });
  res.end(res.req.method === "HEAD" ? undefined : text);
}

function readBody(req, maxBytes) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let done = false;
    const finish = (result) => {
      if (!done) {
        done = true;
        resolve(result);
      }
    };
    req.on("data", (chunk) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) {
        finish({ ok: false, status: 413, error: "payload too large" });
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => finish({ ok: true, text: Buffer.concat(chunks).toString("utf8") }));
    req.on("error", () => finish({ ok: false, status: 400, error: "connection closed" }));
    req.on("aborted", () => finish({ ok: false, status: 400, error: "connection closed" }));
  });
}

// ---------------------------------------------------------------------------------------------
// Probes

const PROBES = new Map([
  ["/health", "live"],
  ["/healthz", "live"],
  ["/ready", "ready"],
  ["/readyz", "ready"],
  ["/startup", "startup"],
  ["/startupz", "startup"],
]);
// As OpenClaw 2026.9.6 (without gateway.trustedProxies): a request carrying proxy forwarding headers
// is refused with 403 proxy_attribution_required, liveness probes excepted.
const LIVENESS = new Set(["/health", "/healthz"]);
const carriesForwarding = (req) => Object.keys(req.headers).some((name) => name === "forwarded" || name === "x-real-ip" || name.startsWith("x-forwarded-"));
function refuseUnattributedProxy(res) {
  sendJson(res, 403, { error: {
    message: "Proxy client attribution is required. Configure gateway.trustedProxies narrowly and make the proxy overwrite or safely rebuild forwarded client headers.",
    type: "proxy_attribution_required",
  } });
}
const readyDelayMs = Math.max(0, Number(process.env.AGENTYARD_MINIMAL_READY_DELAY_MS) || 0);

function handleProbe(req, res, kind) {
  if (req.method !== "GET" && req.method !== "HEAD") {
    sendText(res, 405, "Method Not Allowed", { Allow: "GET, HEAD" });
    return;
  }
  const uptimeMs = Date.now() - startedAt;
  const ready = uptimeMs >= readyDelayMs;
  const noStore = { "Cache-Control": "no-store" };
  if (kind === "live") sendJson(res, 200, { ok: true, status: "live" }, noStore);
  else if (kind === "ready") {
    sendJson(res, ready ? 200 : 503, { ready, failing: ready ? [] : ["startup-sidecars"], uptimeMs }, noStore);
  } else {
    sendJson(res, ready ? 200 : 503, ready ? { ok: true, status: "started", uptimeMs }
      : { ok: false, status: "starting", uptimeMs, pendingReason: "startup-sidecars" }, noStore);
  }
}

// ---------------------------------------------------------------------------------------------
// Hooks

const authFailures = new Map(); // client ip -> array of failure timestamps
const replay = new Map(); // idempotency key + body digest -> runId

function clientIp(req) {
  return (req.socket.remoteAddress || "unknown").replace(/^::ffff:/, "");
}

function tokenMatches(hooks, req) {
  let token;
  const auth = req.headers.authorization?.trim() ?? "";
  if (auth.toLowerCase().startsWith("bearer ")) token = auth.slice(7).trim() || undefined;
  if (!token) token = str(req.headers["x-openclaw-token"]);
  if (!token) return false;
  return timingSafeEqual(createHash("sha256").update(token).digest(), hooks.tokenDigest);
}

function resolveRequestSessionKey(hooks, raw) {
  const requested = str(raw);
  if (requested) {
    if (!hooks.allowRequestSessionKey) {
      return { ok: false, error: "sessionKey is disabled for externally supplied hook payload values; set hooks.allowRequestSessionKey=true to enable" };
    }
    if (hooks.allowedSessionKeyPrefixes && !hooks.allowedSessionKeyPrefixes.some((p) => requested.toLowerCase().startsWith(p))) {
      return { ok: false, error: `sessionKey must start with one of: ${hooks.allowedSessionKeyPrefixes.join(", ")}` };
    }
    return { ok: true, value: requested };
  }
  return { ok: true, value: hooks.defaultSessionKey ?? `hook:${randomUUID()}` };
}

function idempotencyKey(req, payload) {
  for (const v of [req.headers["idempotency-key"], req.headers["x-openclaw-idempotency-key"], payload.idempotencyKey]) {
    if (typeof v === "string" && v.trim() && v.trim().length <= 256) return v.trim();
  }
  return undefined;
}

async function handleHooks(req, res, hooks, url) {
  if (url.searchParams.has("token")) {
    sendText(res, 400, "Hook token must be provided via Authorization: Bearer <token> or X-OpenClaw-Token header (query parameters are not allowed).");
    return;
  }
  if (req.method !== "POST") {
    sendText(res, 405, "Method Not Allowed", { Allow: "POST" });
    return;
  }
  const ip = clientIp(req);
  if (!tokenMatches(hooks, req)) {
    const now = Date.now();
    const recent = (authFailures.get(ip) ?? []).filter((t) => t > now - HOOK_AUTH_FAILURE_WINDOW_MS);
    const loopback = ip === "127.0.0.1" || ip === "::1";
    if (!loopback && recent.length >= HOOK_AUTH_FAILURE_LIMIT) {
      const retryAfter = Math.max(1, Math.ceil((recent[0] + HOOK_AUTH_FAILURE_WINDOW_MS - now) / 1000));
      sendText(res, 429, "Too Many Requests", { "Retry-After": String(retryAfter) });
      return;
    }
    recent.push(now);
    authFailures.set(ip, recent);
    sendText(res, 401, "Unauthorized");
    return;
  }
  authFailures.delete(ip);
  const subPath = url.pathname.slice(hooks.basePath.length).replace(/^\/+/, "");
  if (!subPath || (subPath !== "agent" && subPath !== "wake")) {
    sendText(res, 404, "Not Found");
    return;
  }
  const body = await readBody(req, HOOK_MAX_BODY_BYTES);
  if (!body.ok) {
    sendJson(res, body.status, { ok: false, error: body.error }, body.status === 413 ? { Connection: "close" } : {});
    return;
  }
  let payload = {};
  const trimmed = body.text.trim();
  if (trimmed) {
    try {
      payload = JSON.parse(trimmed);
    } catch (err) {
      sendJson(res, 400, { ok: false, error: err.message });
      return;
    }
  }
  if (!isRecord(payload)) payload = {};

  if (subPath === "wake") {
    const text = str(payload.text);
    if (!text) return sendJson(res, 400, { ok: false, error: "text required" });
    const mode = payload.mode === "next-heartbeat" ? "next-heartbeat" : "now";
    if (payload.agentId !== undefined && !str(payload.agentId)) {
      return sendJson(res, 400, { ok: false, error: "agentId must be a non-empty string" });
    }
    if (payload.sessionKey !== undefined) {
      if (!str(payload.sessionKey)) return sendJson(res, 400, { ok: false, error: "sessionKey must be a non-empty string" });
      if (mode === "next-heartbeat") return sendJson(res, 400, { ok: false, error: "sessionKey requires mode=now" });
      const sk = resolveRequestSessionKey(hooks, payload.sessionKey);
      if (!sk.ok) return sendJson(res, 400, { ok: false, error: sk.error });
    }
    return sendJson(res, 200, { ok: true, mode, eventOutcome: "queued" });
  }

  // subPath === "agent"
  if (payload.waitForCompletion !== undefined && typeof payload.waitForCompletion !== "boolean") {
    return sendJson(res, 400, { ok: false, error: "waitForCompletion must be boolean" });
  }
  const message = str(payload.message);
  if (!message) return sendJson(res, 400, { ok: false, error: "message required" });
  if (payload.agentId !== undefined && !str(payload.agentId)) {
    return sendJson(res, 400, { ok: false, error: "agentId must be a non-empty string" });
  }
  const sessionMode = payload.sessionMode ?? "isolated";
  if (sessionMode !== "isolated" && sessionMode !== "persistent") {
    return sendJson(res, 400, { ok: false, error: "sessionMode must be isolated or persistent" });
  }
  if (payload.model !== undefined && !str(payload.model)) return sendJson(res, 400, { ok: false, error: "model required" });
  if (sessionMode === "persistent" && !str(payload.sessionKey)) {
    return sendJson(res, 400, { ok: false, error: "sessionKey is required when sessionMode is persistent" });
  }
  const sk = resolveRequestSessionKey(hooks, payload.sessionKey);
  if (!sk.ok) return sendJson(res, 400, { ok: false, error: sk.error });
  if (sessionMode === "persistent" && !hooks.allowedSessionKeyPrefixes) {
    return sendJson(res, 400, { ok: false, error: "hooks.allowedSessionKeyPrefixes is required when direct hook sessionMode is persistent" });
  }
  const key = idempotencyKey(req, payload);
  let runId;
  if (key) {
    const replayKey = createHash("sha256").update(`${key}\0${message}\0${str(payload.name) ?? "Hook"}\0${str(payload.sessionKey) ?? ""}`).digest("hex");
    runId = replay.get(replayKey);
    if (!runId) {
      runId = randomUUID();
      replay.set(replayKey, runId);
      if (replay.size > 1000) replay.delete(replay.keys().next().value);
    }
  } else {
    runId = randomUUID();
  }
  const response = { ok: true, runId };
  if (payload.waitForCompletion === true) response.completion = { status: "ok" };
  return sendJson(res, 200, response);
}

// ---------------------------------------------------------------------------------------------
// WebSocket (RFC 6455): handshake, frame parser for masked client frames, unmasked server frames.

const wsSockets = new Set();

function encodeFrame(opcode, payload) {
  const len = payload.length;
  let header;
  if (len < 126) {
    header = Buffer.from([0x80 | opcode, len]);
  } else if (len < 65536) {
    header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(len, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([header, payload]);
}

function closePayload(code, reason = "") {
  const r = Buffer.from(reason, "utf8");
  const b = Buffer.alloc(2 + r.length);
  b.writeUInt16BE(code, 0);
  r.copy(b, 2);
  return b;
}

function validCloseCode(code) {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

function rejectUpgrade(socket, status, reason, extra = "") {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(reason)}\r\n${extra}\r\n${reason}`);
}

function handleUpgrade(req, socket, head) {
  socket.on("error", () => socket.destroy());
  const url = new URL(req.url ?? "/", "http://localhost");
  if (url.pathname !== "/") return rejectUpgrade(socket, 404, "Not Found");
  const upgrade = (req.headers.upgrade ?? "").toLowerCase();
  const connection = (req.headers.connection ?? "").toLowerCase().split(",").map((s) => s.trim());
  const key = req.headers["sec-websocket-key"];
  if (req.method !== "GET" || upgrade !== "websocket" || !connection.includes("upgrade")) {
    return rejectUpgrade(socket, 400, "Bad Request");
  }
  if (req.headers["sec-websocket-version"] !== "13") {
    return rejectUpgrade(socket, 426, "Upgrade Required", "Sec-WebSocket-Version: 13\r\n");
  }
  if (typeof key !== "string" || Buffer.from(key.trim(), "base64").length !== 16) {
    return rejectUpgrade(socket, 400, "Bad Request");
  }
  const accept = createHash("sha1").update(key.trim() + WS_GUID).digest("base64");
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  socket.setNoDelay(true);
  socket.setTimeout(0);
  wsSockets.add(socket);
  if (logRequests) log(`ws open from ${clientIp(req)}`);

  let buf = head && head.length ? Buffer.from(head) : Buffer.alloc(0);
  let fragments = null; // { opcode, parts: Buffer[], size }
  let closing = false;

  const send = (opcode, payload) => {
    if (!socket.destroyed && socket.writable) socket.write(encodeFrame(opcode, payload));
  };
  const fail = (code, reason) => {
    if (!closing) {
      closing = true;
      send(0x8, closePayload(code, reason));
    }
    socket.end();
    buf = Buffer.alloc(0);
  };
  socket.closeFromServer = (code, reason) => {
    if (closing) return;
    closing = true;
    send(0x8, closePayload(code, reason));
    setTimeout(() => socket.destroy(), 500).unref();
  };

  const deliver = (opcode, payload) => {
    if (opcode === 0x1) {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(payload);
      } catch {
        return fail(1007, "invalid utf-8");
      }
    }
    send(opcode, payload); // echo
  };

  const parse = () => {
    while (buf.length >= 2) {
      const b0 = buf[0];
      const b1 = buf[1];
      const fin = (b0 & 0x80) !== 0;
      const rsv = b0 & 0x70;
      const opcode = b0 & 0x0f;
      const masked = (b1 & 0x80) !== 0;
      let len = b1 & 0x7f;
      let offset = 2;
      if (rsv) return fail(1002, "reserved bits set");
      if (!masked) return fail(1002, "client frames must be masked");
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        offset = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        const big = buf.readBigUInt64BE(2);
        if (big > BigInt(WS_MAX_MESSAGE_BYTES)) return fail(1009, "message too big");
        len = Number(big);
        offset = 10;
      }
      const isControl = (opcode & 0x8) !== 0;
      if (isControl && (!fin || len > 125)) return fail(1002, "bad control frame");
      if (len > WS_MAX_MESSAGE_BYTES) return fail(1009, "message too big");
      if (buf.length < offset + 4 + len) return;
      const mask = buf.subarray(offset, offset + 4);
      const payload = Buffer.from(buf.subarray(offset + 4, offset + 4 + len));
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
      buf = buf.subarray(offset + 4 + len);

      if (opcode === 0x8) {
        let code = 1000;
        if (payload.length === 1) return fail(1002, "bad close payload");
        if (payload.length >= 2) {
          code = payload.readUInt16BE(0);
          if (!validCloseCode(code)) return fail(1002, "bad close code");
          try {
            new TextDecoder("utf-8", { fatal: true }).decode(payload.subarray(2));
          } catch {
            return fail(1007, "invalid utf-8");
          }
        }
        if (!closing) {
          closing = true;
          send(0x8, payload.length >= 2 ? closePayload(code) : Buffer.alloc(0));
        }
        socket.end();
        return;
      } else if (opcode === 0x9) {
        send(0xa, payload);
      } else if (opcode === 0xa) {
        // pong: nothing to do
      } else if (opcode === 0x1 || opcode === 0x2) {
        if (fragments) return fail(1002, "expected continuation frame");
        if (fin) deliver(opcode, payload);
        else fragments = { opcode, parts: [payload], size: payload.length };
      } else if (opcode === 0x0) {
        if (!fragments) return fail(1002, "unexpected continuation frame");
        fragments.size += payload.length;
        if (fragments.size > WS_MAX_MESSAGE_BYTES) return fail(1009, "message too big");
        fragments.parts.push(payload);
        if (fin) {
          const { opcode: op, parts } = fragments;
          fragments = null;
          deliver(op, Buffer.concat(parts));
        }
      } else {
        return fail(1002, "unknown opcode");
      }
      if (socket.destroyed) return;
    }
  };

  socket.on("data", (chunk) => {
    if (closing && !socket.writable) return;
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    parse();
  });
  socket.on("close", () => {
    wsSockets.delete(socket);
    if (logRequests) log("ws closed");
  });
  socket.on("end", () => socket.end());
  if (buf.length) parse();
}

// ---------------------------------------------------------------------------------------------
// Server

function main() {
  let cfg;
  let port;
  let hooks;
  try {
    cfg = loadConfig();
    port = resolvePort(cfg.config);
    hooks = resolveHooks(cfg.config);
  } catch (err) {
    process.stderr.write(`[minimal-gateway] ${err.message}\n`);
    process.exit(1);
  }
  const host = process.env.AGENTYARD_MINIMAL_HOST?.trim() || (cfg.config.gateway?.bind === "loopback" ? "127.0.0.1" : "0.0.0.0");

  const server = http.createServer(async (req, res) => {
    if (logRequests) res.on("finish", () => log(`${req.method} ${req.url} ${res.statusCode}`));
    try {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (!LIVENESS.has(url.pathname) && carriesForwarding(req)) return refuseUnattributedProxy(res);
      const probe = PROBES.get(url.pathname);
      if (probe) return handleProbe(req, res, probe);
      if (hooks && (url.pathname === hooks.basePath || url.pathname.startsWith(`${hooks.basePath}/`))) {
        return await handleHooks(req, res, hooks, url);
      }
      sendText(res, 404, "Not Found");
    } catch (err) {
      process.stderr.write(`[minimal-gateway] request failed: ${err?.stack ?? err}\n`);
      if (!res.headersSent) sendJson(res, 500, { ok: false, error: "internal error" });
      else res.destroy();
    }
  });
  server.on("upgrade", handleUpgrade);
  server.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  server.on("error", (err) => {
    process.stderr.write(`[minimal-gateway] server error: ${err.message}\n`);
    process.exit(1);
  });

  let stopping = false;
  const stop = (signal) => {
    if (stopping) return;
    stopping = true;
    log(`${signal} received; shutting down`);
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    for (const s of wsSockets) s.closeFromServer?.(1001, "going away");
    setTimeout(() => {
      server.closeAllConnections();
      for (const s of wsSockets) s.destroy();
    }, 300).unref();
    setTimeout(() => process.exit(0), 1500).unref();
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));

  server.listen(port, host, () => {
    log(`listening on ${host}:${port} (config ${cfg.file}; hooks ${hooks ? hooks.basePath : "disabled"}; ready after ${readyDelayMs} ms)`);
  });
}

main();
