// Shared by the end-to-end CLI tests: run the built CLI (in a process of its own, or in this one
// through its I/O seam) and start a real daemon process.
import './plain-children.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import { format } from 'node:util';
import { main } from '../../src/cli/main.js';
import { hangAfter } from './wait.js';

/** The build this file belongs to (dist/, or a helper's own out dir), and the repository root. */
const BUILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ROOT = path.resolve(BUILD, '..');
/** bin/trove loads dist/src/cli/run.js; running the same file of this build tests the code built with it. */
export const BIN = path.join(BUILD, 'src', 'cli', 'run.js');
/** The published entry, for the one test that checks it. */
export const PUBLISHED_BIN = path.join(ROOT, 'bin', 'trove');

/** A fresh cluster key for a test daemon (TROVE_CLUSTER_KEY). */
export const newClusterKey = (): string => `trove_e2e_${randomBytes(24).toString('hex')}`;

/** The environment without the caller's TROVE_* settings, so only the flags a test passes count. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('TROVE_')) env[name] = value;
  return { ...env, ...extra };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `trove <args>` to completion; `input` is written to its stdin (which is then closed). */
export function runCli(args: string[], options: { env?: Record<string, string>; input?: string; cwd?: string } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env: cleanEnv(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** A stream that keeps what is written to it, as a pipe's reader would read it (not a terminal). */
export class TextSink extends Writable {
  text = '';
  private readonly decoder = new StringDecoder('utf8');

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    done();
  }
}

/**
 * Runs `trove <args>` in this process, through main's I/O seam, with what runCli gives a child:
 * stdout and stderr that are pipes, `input` as a closed stdin, the caller's environment without its
 * TROVE_* settings plus `env`, and `cwd` (the repository root by default). The same CliRun; a crash
 * is printed and exits 1, as src/cli/run.ts does it.
 */
export async function runCliInProcess(args: string[], options: { env?: Record<string, string>; input?: string; cwd?: string } = {}): Promise<CliRun> {
  const stdout = new TextSink({ decodeStrings: false });
  const stderr = new TextSink({ decodeStrings: false });
  const stdin = Readable.from(options.input ? [Buffer.from(options.input, 'utf8')] : []);
  let code: number;
  try {
    code = await main([process.execPath, BIN, ...args], { stdout, stderr, stdin, env: cleanEnv(options.env), cwd: options.cwd ?? ROOT });
  } catch (err) {
    stderr.write(format(err) + '\n');
    code = 1;
  }
  return { code, stdout: stdout.text, stderr: stderr.text };
}

export function parseJson<T = Record<string, unknown>>(run: CliRun): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`expected JSON on stdout, got: ${run.stdout}\nstderr: ${run.stderr}`);
  }
}

export interface DaemonProcess {
  url: string;
  dataDir: string;
  key: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
  /** SIGKILL if still running (for teardown). */
  kill(): void;
}

/**
 * Starts `trove daemon start --port 0 --json` (ephemeral unless `args` names a --data-dir) and waits
 * for its "listening" line.
 */
export async function startDaemonProcess(options: { key?: string; args?: string[]; env?: Record<string, string> } = {}): Promise<DaemonProcess> {
  const key = options.key ?? newClusterKey();
  const args = options.args ?? [];
  const ephemeral = args.includes('--data-dir') ? [] : ['--ephemeral'];
  const child = spawn(process.execPath, [BIN, 'daemon', 'start', ...ephemeral, '--port', '0', '--json', ...args], {
    cwd: ROOT,
    env: cleanEnv({ TROVE_CLUSTER_KEY: key, ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    new Promise<string>((resolve) => lines.once('line', resolve)),
    exited.then(({ code }) => Promise.reject(new Error(`daemon exited (${code}) before listening: ${stderr}`))),
    hangAfter(`the daemon to start: ${stderr}`),
  ]);
  const event = JSON.parse(first) as { event: string; url: string; data_dir: string };
  if (event.event !== 'listening') throw new Error(`unexpected first line: ${first}`);
  return {
    url: event.url,
    dataDir: event.data_dir,
    key,
    child,
    exited,
    stderr: () => stderr,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A fetch of the daemon's API with its cluster key: the tests check a command's effect through it. */
export function apiOf(daemon: { url: string; key: string }) {
  return async function api<T = Record<string, unknown>>(method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
    const res = await fetch(`${daemon.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${daemon.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  };
}

/** An API error as the CLI prints it for a person: its code, message and request ID. */
export const humanError = (code: string) => new RegExp(`^error ${code}: .+ \\(request req_\\w+\\)$`, 'm');

/** The message of an assertion that a run exited 0, with its stderr to explain a failure. */
export const ok = (run: CliRun) => `exit 0 (${run.stderr.trim()})`;
