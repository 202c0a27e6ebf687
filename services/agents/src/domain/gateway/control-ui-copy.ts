import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname, extname, join, posix, sep } from 'node:path';

/**
 * The platform's own copy of the OpenClaw Control UI (the built `dist/control-ui` of the openclaw
 * package the platform installed), which the proxy serves in place of the agent's gateway: the page
 * runs on the console's origin with the owner's session, so none of its HTML, JavaScript or CSS may
 * come from the agent, whose tools can change `gateway.controlUi.root` or replace its gateway.
 */
export interface ControlUiCopy {
  /** The real path of the copy's root; files are served only from under it. */
  root: string;
  /** index.html as built, templated per agent by controlUiPage. */
  indexHtml: string;
  /** The openclaw package's version, when the copy sits in one (dist/control-ui). */
  version: string | undefined;
}

/** The copy at `root`, or null when there is none (no index.html there): the route then answers 503, never the agent's files. */
export function openControlUiCopy(root: string): ControlUiCopy | null {
  let real: string;
  try {
    real = realpathSync(root);
  } catch {
    return null;
  }
  const index = join(real, 'index.html');
  if (!existsSync(index)) return null;
  let version: string | undefined;
  try {
    version = (
      JSON.parse(readFileSync(join(dirname(dirname(real)), 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      }
    ).version;
  } catch {
    /* a copy outside its package: no version to report */
  }
  return { root: real, indexHtml: readFileSync(index, 'utf8'), version };
}

/** OpenClaw's own content types for the Control UI's files (src/gateway/control-ui-static.ts); a file of any other kind is not served. */
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.js', '.css', '.json', '.map', '.svg', '.txt', '.wasm', '.webmanifest']);

const escapeHtml = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The hashes of the page's inline scripts, the only inline code its CSP lets run (as OpenClaw computes them, control-ui-csp.ts). */
function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const [, open, content] of html.matchAll(/<script(\s[^>]*)?>([\s\S]*?)<\/script>/gi)) {
    if (/\ssrc\s*=/i.test(open ?? '') || !content) continue;
    hashes.push(`'sha256-${createHash('sha256').update(content, 'utf8').digest('base64')}'`);
  }
  return hashes;
}

/**
 * The CSP of everything served from the copy: scripts and workers only from under the agent's proxy
 * path (the copy) plus the page's own inline scripts by hash, connections only to the platform (its
 * WebSocket and config; data: urls, which it reads its icons from), no frames, forms, plugins or remote code, so nothing the gateway sends over
 * the WebSocket can load code from elsewhere.
 */
export function controlUiCsp(consoleOrigin: string, basePath: string, inlineHashes: string[] = []): string {
  const scripts = `${consoleOrigin}${basePath}/`;
  return [
    "default-src 'none'",
    "base-uri 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    `script-src ${[scripts, ...inlineHashes].join(' ')}`,
    `worker-src ${scripts}`,
    "manifest-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self' data:",
  ].join('; ');
}

/** The page for one agent, templated as the gateway does (serveResolvedIndexHtml): its files and WebSocket under `basePath`, the terminal off (no admin through the proxy). */
export function controlUiPage(
  copy: ControlUiCopy,
  basePath: string,
  consoleOrigin: string,
): { html: string; csp: string } {
  const html = copy.indexHtml
    .replace(/(src|href)="\.\//g, `$1="${basePath}/`)
    .replace(
      /<html\b/i,
      `<html data-openclaw-control-ui-base-path="${escapeHtml(basePath)}" data-openclaw-terminal-enabled="false"`,
    );
  return { html, csp: controlUiCsp(consoleOrigin, basePath, inlineScriptHashes(html)) };
}

export interface ControlUiFile {
  path: string;
  size: number;
  contentType: string;
  /** br or gzip when a precompressed sibling the browser accepts is served. */
  encoding: 'br' | 'gzip' | undefined;
  /** Fingerprinted (under assets/): cached for a year. */
  immutable: boolean;
}

/**
 * The copy's file at `relative` (decoded, below the root, a kind the Control UI serves), or null:
 * dot segments, absolute paths, NUL, symlinks out of the root and unknown kinds are not found.
 */
export async function controlUiFile(
  copy: ControlUiCopy,
  relative: string,
  acceptEncoding: string,
): Promise<ControlUiFile | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(relative);
  } catch {
    return null;
  }
  const normalized = posix.normalize(decoded);
  if (
    !decoded ||
    decoded.includes('\0') ||
    decoded.includes('\\') ||
    posix.isAbsolute(normalized) ||
    normalized.split('/').includes('..')
  )
    return null;
  const extension = extname(normalized).toLowerCase();
  const contentType = CONTENT_TYPES[extension];
  if (!contentType) return null;
  const candidates: [string, ControlUiFile['encoding']][] = [];
  if (COMPRESSIBLE.has(extension)) {
    if (/\bbr\b/.test(acceptEncoding)) candidates.push([`${normalized}.br`, 'br']);
    if (/\bgzip\b/.test(acceptEncoding)) candidates.push([`${normalized}.gz`, 'gzip']);
  }
  candidates.push([normalized, undefined]);
  for (const [name, encoding] of candidates) {
    const real = await realpath(join(copy.root, name)).catch(() => null);
    if (!real?.startsWith(`${copy.root}${sep}`)) continue;
    const info = await stat(real).catch(() => null);
    if (info?.isFile())
      return { path: real, size: info.size, contentType, encoding, immutable: normalized.startsWith('assets/') };
  }
  return null;
}

/**
 * control-ui-config.json, made by the platform from what it knows (the gateway's answer is the
 * agent's to change): the fields the page reads (OpenClaw's handleControlUiHttpRequest), with
 * nothing that would embed, fetch or frame anything from elsewhere.
 */
export function controlUiRuntimeConfig(
  copy: ControlUiCopy,
  basePath: string,
  agentName: string,
): Record<string, unknown> {
  return {
    basePath,
    assistantName: agentName,
    assistantAvatar: null,
    assistantAvatarSource: null,
    assistantAvatarStatus: null,
    assistantAvatarReason: null,
    ...(copy.version ? { serverVersion: copy.version } : {}),
    embedSandbox: 'strict',
    allowExternalEmbedUrls: false,
    automaticallyFetchFavicons: false,
    communityInvite: false,
    terminalEnabled: false,
    cliAgentsEnabled: false,
    pluginAssetsRequireAuth: true,
    pluginFrameGrants: [],
  };
}
