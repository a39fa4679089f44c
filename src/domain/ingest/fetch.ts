// Fetching the bytes behind a `{type: "uri"}` source (decisions.md §3): `file://` only under roots the
// operator allowed, `http(s)://` only to public addresses unless the daemon allows private ones.

import { constants as fsConstants } from 'node:fs';
import { open, realpath, stat, type FileHandle } from 'node:fs/promises';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TroveError } from '../../contract/errors.js';
import { judgeAddress } from '../net/addresses.js';
import { IngestFailure } from './types.js';

export interface FetchOptions {
  /** Allow http(s) to loopback, private, link-local and other non-public addresses (--allow-private-sources). */
  allowPrivate: boolean;
  /** Directories under which `file://` sources may lie (--allow-file-root). */
  fileRoots: readonly string[];
  maxBytes: number;
  /** Budget for the whole fetch, redirects and body included. */
  timeoutMs: number;
  maxRedirects?: number;
  /** Aborts the fetch: its job was canceled, its file changed or the worker is stopping. */
  signal?: AbortSignal;
}

export interface FetchedSource {
  bytes: Buffer;
  /** The response's media type without parameters (`text/html`), when the server sent one. */
  contentType?: string;
}

const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const ALLOW_FILE_ROOT_HINT = 'start the daemon with --allow-file-root DIR to allow a folder';

function isPathWithin(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  if (relative === '') return true;
  if (path.isAbsolute(relative)) return false;
  return relative.split(path.sep)[0] !== '..';
}

/**
 * The local path of a `file://` URI if it lies under one of `roots`; lexical only (no symlinks are
 * followed), which is what validating a request at add time can afford. fetchSourceUri checks again.
 */
export function fileUriToAllowedPath(uri: string, roots: readonly string[]): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new TroveError('invalid_request', `source.uri is not a valid URI: ${uri}`);
  }
  if (url.protocol !== 'file:') throw new TroveError('invalid_request', `source.uri is not a file:// URI: ${uri}`);

  let filePath: string;
  try {
    filePath = path.resolve(fileURLToPath(url));
  } catch (err) {
    throw new TroveError('invalid_request', `source.uri is not a usable local file URI (${(err as Error).message}): ${uri}`);
  }

  if (roots.length === 0) {
    throw new TroveError('invalid_request', `file:// sources are not allowed: no folder is allowed on this daemon; ${ALLOW_FILE_ROOT_HINT}.`, { path: filePath });
  }
  if (!roots.some((root) => isPathWithin(path.resolve(root), filePath))) {
    throw new TroveError('invalid_request', `${filePath} is not under an allowed folder; ${ALLOW_FILE_ROOT_HINT}.`, { path: filePath });
  }
  return filePath;
}

export async function fetchSourceUri(uri: string, opts: FetchOptions): Promise<FetchedSource> {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new IngestFailure('fetch_failed', `Not a valid URI: ${uri}`);
  }
  switch (url.protocol) {
    case 'file:':
      return { bytes: await readAllowedFile(uri, opts) };
    case 'http:':
    case 'https:':
      return fetchHttp(url, opts);
    default:
      throw new IngestFailure('unsupported_content', `Unsupported URI scheme ${url.protocol.slice(0, -1)}; supported schemes are file, http and https.`);
  }
}

// ---- file:// ----

async function readAllowedFile(uri: string, opts: FetchOptions): Promise<Buffer> {
  let lexicalPath: string;
  try {
    // Roots may have been revoked since the file was added, so the lexical check is repeated.
    lexicalPath = fileUriToAllowedPath(uri, opts.fileRoots);
  } catch (err) {
    throw new IngestFailure('fetch_failed', (err as Error).message, { cause: err });
  }

  let realPath: string;
  try {
    realPath = await realpath(lexicalPath);
  } catch (err) {
    throw fileFailure(lexicalPath, err);
  }
  // Compared against the roots' real paths too, so a root that is itself a symlink still works, while
  // a symlink inside a root that points outside every root is refused.
  const realRoots = await Promise.all(opts.fileRoots.map((root) => realpath(root).catch(() => path.resolve(root))));
  if (!realRoots.some((root) => isPathWithin(root, realPath))) {
    // Where the link points is not said: it would tell the caller about folders it may not read.
    throw new IngestFailure('fetch_failed', `${lexicalPath} leads through a symlink to a path that is not under an allowed folder; ${ALLOW_FILE_ROOT_HINT}.`);
  }

  try {
    // Checked before opening: opening a FIFO for reading would block until a writer appears.
    const info = await stat(realPath);
    if (!info.isFile()) throw new IngestFailure('fetch_failed', `${lexicalPath} is not a regular file.`);
    if (info.size > opts.maxBytes) throw tooLarge(opts.maxBytes);
    // O_NOFOLLOW: the checked path must not be swapped for a symlink between the check and the open.
    const handle = await open(realPath, fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0));
    try {
      return await readAtMost(handle, opts.maxBytes);
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (err instanceof IngestFailure) throw err;
    throw fileFailure(lexicalPath, err);
  }
}

/** Reads to the end, failing with too_large as soon as more than maxBytes arrive (the file may grow). */
async function readAtMost(handle: FileHandle, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(Math.max(maxBytes - total + 1, 1), 1 << 20));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk.subarray(0, bytesRead));
  }
  return Buffer.concat(chunks, total);
}

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory',
  ELOOP: 'too many levels of symlinks',
};

/**
 * `filePath` is the path as the caller wrote it. The system error's own message is not used: it
 * names the path the call was given, which for the reads after realpath is a symlink's target.
 */
function fileFailure(filePath: string, err: unknown): IngestFailure {
  const code = (err as NodeJS.ErrnoException).code;
  const reason = (code && READ_ERRORS[code]) ?? code ?? 'read error';
  return new IngestFailure('fetch_failed', `Cannot read ${filePath}: ${reason}.`, { cause: err });
}

function tooLarge(maxBytes: number): IngestFailure {
  return new IngestFailure('too_large', `The source is larger than the limit of ${maxBytes} bytes.`);
}

// ---- http(s):// ----

function privateAddressFailure(host: string, address: string): IngestFailure {
  return new IngestFailure(
    'fetch_failed',
    `Refused to fetch from ${host}: address ${address} is private (${judgeAddress(address).description}; only global unicast addresses are public); the daemon flag --allow-private-sources allows it.`,
  );
}

/**
 * A connect-time lookup that refuses a host if any of its addresses is not public. Because the
 * socket connects to exactly the addresses checked here, DNS rebinding cannot slip past the check.
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '');
      const refused = allowPrivate ? undefined : addresses.find((a) => !judgeAddress(a.address).public);
      if (refused) return callback(privateAddressFailure(hostname, refused.address), '');
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`No addresses for ${hostname}`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}

async function fetchHttp(initialUrl: URL, opts: FetchOptions): Promise<FetchedSource> {
  const maxRedirects = opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const controller = new AbortController();
  const timeoutFailure = new IngestFailure('fetch_failed', `Fetching ${initialUrl.host} timed out after ${opts.timeoutMs} ms.`);
  const timer = setTimeout(() => controller.abort(timeoutFailure), opts.timeoutMs);
  const stopped = new IngestFailure('fetch_failed', `Fetching ${initialUrl.host} was stopped: the file's job was canceled or the file changed.`);
  const stop = () => controller.abort(stopped);
  if (opts.signal?.aborted) stop();
  opts.signal?.addEventListener('abort', stop, { once: true });
  try {
    let url = initialUrl;
    for (let redirects = 0; ; redirects++) {
      const response = await guardedGet(url, opts.allowPrivate, controller.signal);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECT_STATUSES.has(status) && location !== undefined) {
        response.resume();
        if (redirects >= maxRedirects) throw new IngestFailure('fetch_failed', `Too many redirects (more than ${maxRedirects}) starting from ${initialUrl.host}.`);
        url = nextHop(url, location);
        continue;
      }
      if (status < 200 || status > 299) {
        response.resume();
        throw new IngestFailure('fetch_failed', `HTTP ${status} from ${url.host}`);
      }
      const bytes = await readBody(response, opts.maxBytes);
      const contentType = response.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
      return contentType ? { bytes, contentType } : { bytes };
    }
  } catch (err) {
    if (controller.signal.aborted) throw controller.signal.reason === stopped ? stopped : timeoutFailure;
    if (err instanceof IngestFailure) throw err;
    throw new IngestFailure('fetch_failed', `Fetching ${initialUrl.host} failed: ${(err as Error).message}`, { cause: err });
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', stop);
    // Releases whatever socket is still open after a failure (too large, too many redirects).
    controller.abort();
  }
}

function nextHop(from: URL, location: string): URL {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    throw new IngestFailure('fetch_failed', `${from.host} redirected to an invalid location.`);
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    throw new IngestFailure('fetch_failed', `${from.host} redirected to a ${next.protocol.slice(0, -1)} URI; only http and https redirects are followed.`);
  }
  return next;
}

function guardedGet(url: URL, allowPrivate: boolean, signal: AbortSignal): Promise<IncomingMessage> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // Node connects to IP literals without calling `lookup`, so they are checked here instead.
  if (!allowPrivate && isIP(host) !== 0 && !judgeAddress(host).public) {
    return Promise.reject(privateAddressFailure(url.host, host));
  }
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'GET',
      headers: { accept: '*/*', 'user-agent': 'trove' },
      lookup: guardedLookup(allowPrivate),
      // No pooling: a pooled socket may have been connected by a request that did not use this lookup.
      agent: false,
      signal,
    });
    req.once('response', resolve);
    // `on`, not `once`: a later error (the abort that ends every fetch) must not go unhandled.
    req.on('error', reject);
    req.end();
  });
}

async function readBody(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    throw tooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    total += chunk.length;
    // Leaving the loop destroys the response, which aborts the transfer.
    if (total > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}
