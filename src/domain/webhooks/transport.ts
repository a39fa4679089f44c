// Receiver URLs and the one POST a delivery makes (workspace-api.md, URL rules 1-4):
// https only (http to loopback with --allow-insecure-webhooks), no userinfo or fragment, public
// addresses only — checked at create, at update and at every connection (so DNS rebinding cannot
// slip past) — and no redirects or proxies.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAsync } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { TroveError } from '../../contract/errors.js';
import { judgeAddress } from '../net/addresses.js';

export interface UrlPolicy {
  /** --allow-insecure-webhooks: http:// and loopback receivers (a developer's machine, CI). */
  allowInsecure: boolean;
}

export const MAX_URL_LENGTH = 2048;

/** Why an address may not receive deliveries under this policy, or undefined when it may. */
export function addressProblem(ip: string, protocol: string, policy: UrlPolicy): string | undefined {
  const verdict = judgeAddress(ip);
  // Loopback here is this machine's own (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104), not a tunnelled
  // or translated form of it such as ::127.0.0.1 or 64:ff9b::7f00:1.
  if (policy.allowInsecure && verdict.loopback) return undefined;
  if (protocol === 'http:') return `http:// receivers must resolve to loopback addresses only (${ip} is not)`;
  if (!verdict.public) {
    return `address ${ip} is not public (${verdict.description}; only global unicast addresses are)${policy.allowInsecure ? '' : '; a daemon started with --allow-insecure-webhooks accepts loopback receivers'}`;
  }
  return undefined;
}

function bareHost(url: URL): string {
  return url.hostname.startsWith('[') && url.hostname.endsWith(']') ? url.hostname.slice(1, -1) : url.hostname;
}

/** The syntactic rules; returns the parsed URL or throws invalid_request. */
export function parseReceiverUrl(raw: string, policy: UrlPolicy): URL {
  if (raw.length > MAX_URL_LENGTH) throw new TroveError('invalid_request', `url is longer than ${MAX_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TroveError('invalid_request', 'url is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:' && !(policy.allowInsecure && url.protocol === 'http:')) {
    throw new TroveError(
      'invalid_request',
      policy.allowInsecure ? 'url must use https:// (or http:// to a loopback address).' : 'url must use https://; start the daemon with --allow-insecure-webhooks to deliver to http://127.0.0.1 during development.',
    );
  }
  if (url.username !== '' || url.password !== '' || /^[a-z]+:\/\/[^/?#]*@/i.test(raw)) throw new TroveError('invalid_request', 'url must not carry a user name or password.');
  if (raw.includes('#')) throw new TroveError('invalid_request', 'url must not carry a fragment.');
  if (url.hostname === '') throw new TroveError('invalid_request', 'url has no host.');
  return url;
}

/** Syntax plus resolution: every address the host resolves to must be allowed (create and update). */
export async function checkReceiverUrl(raw: string, policy: UrlPolicy): Promise<URL> {
  const url = parseReceiverUrl(raw, policy);
  const host = bareHost(url);
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await dnsLookupAsync(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch (err) {
      throw new TroveError('invalid_request', `url's host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'lookup failed'}).`);
    }
  }
  if (addresses.length === 0) throw new TroveError('invalid_request', `url's host ${host} has no addresses.`);
  for (const a of addresses) {
    const problem = addressProblem(a, url.protocol, policy);
    if (problem) throw new TroveError('invalid_request', `url refused: ${problem}.`, { host, address: a });
  }
  return url;
}

class RefusedAddress extends Error {
  readonly code = 'EWEBHOOKADDR';
}

/** A connect-time lookup: the socket connects only to addresses checked here. */
function guardedLookup(protocol: string, policy: UrlPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '');
      for (const a of addresses) {
        const problem = addressProblem(a.address, protocol, policy);
        if (problem) return callback(new RefusedAddress(`refused ${hostname}: ${problem}`), '');
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no addresses for ${hostname}`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}

export interface PostResult {
  /** The receiver's HTTP status; null when it did not answer (timeout, network or TLS error, refused address). */
  status: number | null;
  headers: Record<string, string | string[] | undefined>;
  /** The start of the answer's body (at most 64 KiB), as text. */
  body: string;
  error: string | null;
  durationMs: number;
}

const MAX_ANSWER_BYTES = 64 * 1024;

/** One POST, no redirects, no proxy, no pooled sockets; the whole exchange within timeoutMs. */
export async function postOnce(rawUrl: string, body: string, headers: Record<string, string>, opts: UrlPolicy & { timeoutMs: number; signal?: AbortSignal }): Promise<PostResult> {
  const started = Date.now();
  const done = (r: Omit<PostResult, 'durationMs'>): PostResult => ({ ...r, durationMs: Date.now() - started });
  let url: URL;
  try {
    url = parseReceiverUrl(rawUrl, opts);
  } catch (err) {
    return done({ status: null, headers: {}, body: '', error: (err as Error).message });
  }
  const host = bareHost(url);
  // Node connects to IP literals without calling `lookup`, so they are checked here.
  if (isIP(host) !== 0) {
    const problem = addressProblem(host, url.protocol, opts);
    if (problem) return done({ status: null, headers: {}, body: '', error: `refused: ${problem}` });
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
  // The dispatcher stopping (daemon shutdown) ends the request at once; the delivery stays pending.
  const onStop = () => controller.abort(new Error('the dispatcher stopped'));
  if (opts.signal?.aborted) onStop();
  opts.signal?.addEventListener('abort', onStop, { once: true });
  const request = url.protocol === 'https:' ? https.request : http.request;
  try {
    return await new Promise<PostResult>((resolve) => {
      let settled = false;
      const finish = (r: Omit<PostResult, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        resolve(done(r));
      };
      const req = request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'trove-webhooks', 'content-length': String(Buffer.byteLength(body)), ...headers },
        lookup: guardedLookup(url.protocol, opts),
        agent: false,
        signal: controller.signal,
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const status = res.statusCode ?? 0;
        const answer = () => finish({ status, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), error: null });
        res.on('data', (chunk: Buffer) => {
          if (size >= MAX_ANSWER_BYTES) return;
          chunks.push(chunk.subarray(0, MAX_ANSWER_BYTES - size));
          size += chunk.length;
          if (size >= MAX_ANSWER_BYTES) {
            answer();
            res.destroy();
          }
        });
        res.on('end', answer);
        // The status arrived; a body cut short (timeout, reset) still counts as that answer.
        res.on('error', answer);
        res.on('close', answer);
      });
      req.on('error', (err) => {
        const reason = controller.signal.aborted ? String((controller.signal.reason as Error)?.message ?? 'timed out') : (err as Error).message;
        finish({ status: null, headers: {}, body: '', error: reason });
      });
      req.end(body);
    });
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onStop);
  }
}
