// The CLI's I/O seam: every command writes, reads its input and environment, resolves relative
// paths and sets its exit status through the invocation it runs in, never through `process`.
// src/cli/run.ts hands over the process's own streams; tests run `main(argv, io)` in-process with
// their own (test/helpers/cli.ts runCliInProcess), several at once, each isolated from the others.
import { AsyncLocalStorage } from 'node:async_hooks';
import { resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { formatWithOptions } from 'node:util';
import type { CommanderError } from 'commander';

/** An output stream; `isTTY` and `columns` as a terminal stream has them (absent on a pipe). */
export type CliOutput = Writable & { readonly isTTY?: boolean; readonly columns?: number; hasColors?(): boolean };
export type CliInput = Readable & { readonly isTTY?: boolean };
export type CliEnv = Readonly<Record<string, string | undefined>>;

export interface CliIo {
  stdout: CliOutput;
  stderr: CliOutput;
  stdin: CliInput;
  env: CliEnv;
  /** What relative paths on the command line are relative to. */
  cwd: string;
}

interface Invocation {
  readonly io: CliIo;
  /** The command line after `trove`. */
  readonly args: readonly string[];
  exitCode: number;
}

const invocations = new AsyncLocalStorage<Invocation>();

/** The process's own streams, environment and working directory (the real entry's I/O). */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
}

/**
 * The I/O of the invocation running; a command function called outside one (a test calling it
 * directly) gets the process's own.
 */
export function currentIo(): CliIo {
  return invocations.getStore()?.io ?? processIo();
}

export const out = (): CliOutput => currentIo().stdout;
export const errOut = (): CliOutput => currentIo().stderr;
export const cliStdin = (): CliInput => currentIo().stdin;
export const cliEnv = (): CliEnv => currentIo().env;
export const cliCwd = (): string => currentIo().cwd;

/** The invocation's command line after `trove` (the process's, outside one). */
export const cliArgs = (): readonly string[] => invocations.getStore()?.args ?? process.argv.slice(2);

/** A path from the command line or the environment, made absolute against the invocation's cwd. */
export const fromCwd = (path: string): string => resolve(cliCwd(), path);

/** The context inquirer prompts take, so that they ask on the invocation's terminal. */
export const promptContext = (): { input: CliInput; output: CliOutput } => ({ input: cliStdin(), output: out() });

/** A value printed the way console.error prints it (an Error with its stack, coloured on a colour terminal). */
export function formatForConsole(value: unknown, stream: CliOutput): string {
  return formatWithOptions({ colors: Boolean(stream.isTTY && stream.hasColors?.()) }, value);
}

/** Thrown to end the invocation at once with an exit status (what process.exit was in one process). */
export class CliExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
    this.name = 'CliExit';
  }
}

/** The status the invocation exits with once its command returns (process.exitCode's role). */
export function setExitCode(code: number): void {
  const invocation = invocations.getStore();
  if (!invocation) throw new Error('setExitCode outside a CLI invocation');
  invocation.exitCode = code;
}

/**
 * Commander exits 1 on a usage error (missing argument or option, unknown option); the CLI's
 * convention is 2 for those, as ERROR_TABLE's invalid_request, and 0 for --help and --version.
 */
export function exitOnCommanderError(err: CommanderError): never {
  throw new CliExit(err.exitCode === 0 ? 0 : 2);
}

/** Runs `command` (the parse of `args`) with `io` as its I/O and returns its exit status. */
export async function invoke(io: CliIo, args: readonly string[], command: () => Promise<void>): Promise<number> {
  const invocation: Invocation = { io, args, exitCode: 0 };
  return invocations.run(invocation, async () => {
    try {
      await command();
    } catch (err) {
      if (err instanceof CliExit) return err.exitCode;
      throw err;
    }
    return invocation.exitCode;
  });
}

/**
 * Commander's colour rule for help (its useColor: NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE, else the
 * stream's own), read from the invocation's environment instead of the process's.
 */
export function commanderHasColors(stream: CliOutput): boolean {
  const vars = cliEnv();
  if (vars.NO_COLOR || vars.FORCE_COLOR === '0' || vars.FORCE_COLOR === 'false') return false;
  if (vars.FORCE_COLOR || vars.CLICOLOR_FORCE !== undefined) return true;
  return Boolean(stream.isTTY && stream.hasColors?.());
}

/** Commander's help width: the terminal's, else its default of 80 (on a pipe). */
export const helpWidth = (stream: CliOutput): number => (stream.isTTY ? stream.columns : undefined) ?? 80;
