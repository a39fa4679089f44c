// Which browsers and names may reach `/mcp`: a defence against DNS rebinding (MCP transports,
// "Security warning"). A page on evil.example.com whose name the attacker points at 127.0.0.1
// makes the browser send `Host: evil.example.com` and `Origin: http://evil.example.com`; neither
// is the daemon's, so the request is refused before any key is read. A client that is not a
// browser sends no Origin, and is let through on its Host alone.
import { networkInterfaces, hostname as machineName } from 'node:os';
import { normalOrigin, parseHostHeader, type McpSettings } from '../domain/mcp-settings.js';

/** Origins and hosts allowed besides the daemon's own, in normal form (src/domain/mcp-settings.ts). */
export type OriginPolicy = Pick<McpSettings, 'allowedOrigins' | 'allowedHosts'>;

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

function isWildcard(name: string): boolean {
  return name === '0.0.0.0' || name === '[::]';
}

/** `[::1]` for an IPv6 address, as URLs and Host headers write it. */
function bracketed(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

/** The names the daemon answers to on its own: its bound address, or every local one when bound to all. */
function boundNames(listening: URL): string[] {
  const host = listening.hostname.toLowerCase();
  if (isLoopbackName(host)) return [...LOOPBACK_NAMES, host];
  if (!isWildcard(host)) return [host];
  const local = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => bracketed(i.address.toLowerCase())));
  return [...LOOPBACK_NAMES, ...local, machineName().toLowerCase()];
}

function portOf(url: URL): string {
  return url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
}

export type OriginRefusal = { reason: 'origin_not_allowed' | 'host_not_allowed'; message: string };

/**
 * Null when a request with these headers may reach `/mcp` of the daemon listening at `listeningUrl`;
 * otherwise why not. The Host must be one of the daemon's own names at its port, or an allowed host;
 * an Origin, when sent, must be one of the daemon's own loopback origins, its listening origin, or an allowed origin.
 */
export function refusalOf(headers: { host?: string | undefined; origin?: string | undefined }, listeningUrl: string, policy: OriginPolicy): OriginRefusal | null {
  const listening = new URL(listeningUrl);
  const port = portOf(listening);
  const host = headers.host === undefined ? null : parseHostHeader(headers.host.trim());
  const hostAllowed =
    host !== null &&
    ((boundNames(listening).includes(host.name) && (host.port ?? (listening.protocol === 'https:' ? '443' : '80')) === port) ||
      policy.allowedHosts.some((entry) => entry === host.name || entry === `${host.name}:${host.port ?? ''}`));
  if (!hostAllowed) {
    return {
      reason: 'host_not_allowed',
      message: `Host '${headers.host ?? ''}' is not an address this daemon answers MCP on. A daemon behind a proxy or load balancer names its public host with --mcp-allowed-host (docs/daemon.md).`,
    };
  }
  if (headers.origin === undefined) return null;
  const origin = normalOrigin(headers.origin.trim());
  const own = [...LOOPBACK_NAMES.map((name) => new URL(`${listening.protocol}//${name}:${port}`).origin), listening.origin.toLowerCase()];
  if (origin !== null && (own.includes(origin) || policy.allowedOrigins.includes(origin))) return null;
  return {
    reason: 'origin_not_allowed',
    message: `Origin '${headers.origin}' may not call this daemon's MCP endpoint (a web page from another site). Allow a web client's origin with --mcp-allowed-origin (docs/daemon.md).`,
  };
}
