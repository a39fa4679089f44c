// `trove tui`: the Ink terminal UI. It needs a terminal on both ends (keys in, frames out); tests
// and odd setups can insist with --force-tty.
import { PassThrough } from 'node:stream';
import { ApiClient, CliError, reportError } from '../client.js';
import { readCliConfig } from '../cli-config.js';
import { resolveConnection, resolveDataDir, type GlobalOptions } from '../connection.js';
import { savedTarget } from '../defaults.js';

export interface TuiOptions {
  forceTty?: boolean;
  /** false (--no-operator): take live events from GET /events even when the operator socket is there. */
  operator?: boolean;
  json?: boolean;
}

const ALTERNATE_SCREEN_ON = '\u001B[?1049h';
const ALTERNATE_SCREEN_OFF = '\u001B[?1049l';

export async function runTui(globalOpts: GlobalOptions, opts: TuiOptions): Promise<number> {
  const json = Boolean(opts.json);
  const forced = Boolean(opts.forceTty);
  try {
    if (!process.stdout.isTTY && !forced) {
      throw new CliError('trove tui draws a terminal UI, but stdout is not a terminal. Run it in a terminal (or pass --force-tty to draw anyway).', 2);
    }
    if (!process.stdin.isTTY && !forced) {
      throw new CliError('trove tui reads keys from a terminal, but stdin is not one. Run it in a terminal (or pass --force-tty to read keys from stdin as it is).', 2);
    }
    const conn = await resolveConnection(globalOpts);
    // After `trove init`, the UI opens on the saved collection's search (Esc lists them all).
    const initial = savedTarget(await readCliConfig(), conn.url);
    // No daemon is a start-up error (exit 9, as in every command), not a screen that waits forever.
    await new ApiClient(conn.url).request('GET', '/ready', undefined, { auth: false }).catch((err: unknown) => {
      if (err instanceof CliError && err.code === 'daemon_unreachable') throw err;
    });

    // Ink draws only a final frame when the environment looks like CI (is-in-ci, read once when Ink
    // loads), and chalk drops colours there. A terminal was asked for, so it is treated as one even
    // inside a CI job: the markers go before either is loaded.
    for (const name of Object.keys(process.env)) {
      if (name === 'CI' || name === 'CONTINUOUS_INTEGRATION' || name.startsWith('CI_')) delete process.env[name];
    }
    // Loaded here, not at the top: every other command would pay for React and Ink otherwise.
    const [{ createElement }, { render }, { App }, { createBackend }] = await Promise.all([
      import('react'),
      import('ink'),
      import('../../tui/app.js'),
      import('../../tui/backend.js'),
    ]);
    const backend = createBackend(conn, resolveDataDir(globalOpts), { operator: opts.operator !== false });

    // Ink needs raw mode on its stdin; a pipe has none, so under --force-tty keys come through a
    // stand-in stream that accepts raw mode and passes the bytes on unchanged.
    let keys: NodeJS.ReadStream = process.stdin;
    let standIn: PassThrough | undefined;
    if (!process.stdin.isTTY) {
      standIn = new PassThrough();
      Object.assign(standIn, { isTTY: true, setRawMode: () => standIn, ref: () => standIn, unref: () => standIn });
      process.stdin.pipe(standIn);
      keys = standIn as unknown as NodeJS.ReadStream;
    }

    // The alternate screen keeps the user's scrollback as it was once the UI is gone.
    const fullScreen = Boolean(process.stdout.isTTY);
    if (fullScreen) process.stdout.write(ALTERNATE_SCREEN_ON);
    const instance = render(createElement(App, { backend, ...(initial ? { initial } : {}) }), { stdin: keys, exitOnCtrlC: true, patchConsole: true });
    const stop = () => instance.unmount();
    process.once('SIGTERM', stop);
    process.once('SIGHUP', stop);
    try {
      await instance.waitUntilExit();
    } finally {
      process.off('SIGTERM', stop);
      process.off('SIGHUP', stop);
      if (fullScreen) process.stdout.write(ALTERNATE_SCREEN_OFF);
      if (standIn) {
        process.stdin.unpipe(standIn);
        standIn.destroy();
      }
      process.stdin.pause();
    }
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}
