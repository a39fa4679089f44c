// Whether human output may carry colour and bold, decided in one place for every command and the
// TUI. No dependency: the rules are short, and node's own `util.styleText` does the styling when
// this Node has it (20.12+), raw ANSI otherwise.
import * as util from 'node:util';
import { cliEnv, out } from './io.js';

export interface ColourInputs {
  /** The environment to read NO_COLOR / FORCE_COLOR / TERM from. */
  env: NodeJS.ProcessEnv;
  /** Whether the stream written to is a terminal. */
  isTTY: boolean;
  /** Machine output (--json) is never styled. */
  json?: boolean;
}

/**
 * The rules, in order:
 * 1. --json: never (the output is for programs).
 * 2. NO_COLOR set to any non-empty value (https://no-color.org): never. It wins over FORCE_COLOR,
 *    because it is the user's standing opt-out and colour is never needed to read the output.
 * 3. FORCE_COLOR: "0" or "false" turns colour off; any other non-empty value turns it on, even
 *    into a pipe (the convention node, chalk and most CLIs follow).
 * 4. Otherwise: on when the stream is a terminal and TERM is not "dumb".
 */
export function colourEnabled({ env, isTTY, json }: ColourInputs): boolean {
  if (json) return false;
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force.toLowerCase() !== 'false';
  return isTTY && env.TERM !== 'dumb';
}

/** The decision for the invocation's stdout. */
export function stdoutColour(json = false): boolean {
  return colourEnabled({ env: cliEnv(), isTTY: Boolean(out().isTTY), json });
}

export type Style = 'bold' | 'dim' | 'yellow' | 'cyan';

// SGR on/off pairs; the "off" codes reset only their own attribute, so styles nest.
const ANSI: Record<Style, [number, number]> = { bold: [1, 22], dim: [2, 22], yellow: [33, 39], cyan: [36, 39] };

type StyleText = (format: Style, text: string, options?: { validateStream?: boolean }) => string;
const styleText = (util as unknown as { styleText?: StyleText }).styleText;

/** `text` in the given styles when `enabled`, unchanged otherwise. */
export function paint(text: string, styles: readonly Style[], enabled: boolean): string {
  if (!enabled || text === '') return text;
  let out = text;
  for (const style of styles) {
    // Newer Node (22.13+) checks the stream itself unless told not to; the decision was made above.
    out = styleText ? styleText(style, out, { validateStream: false }) : `\u001B[${ANSI[style][0]}m${out}\u001B[${ANSI[style][1]}m`;
  }
  return out;
}
