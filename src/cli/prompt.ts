// The one rule for prompts in the CLI: ask only when a person is at the terminal (stdin and stdout
// are TTYs); otherwise never block on input, fail with exit code 2 and name the flag that answers
// the question instead. Scripts and CI always go through the flag.
import { confirm } from '@inquirer/prompts';
import { CliError } from './client.js';
import { cliStdin, out, promptContext } from './io.js';

/** True when a prompt can be shown and answered. */
export function isInteractive(): boolean {
  return Boolean(cliStdin().isTTY && out().isTTY);
}

/**
 * For a value the user did not pass: throws (exit 2, naming `flagName`) unless a prompt may be
 * shown. Call it before prompting for the value.
 */
export function requireInteractive(flagName: string, what?: string): void {
  if (isInteractive()) return;
  throw new CliError(`${what ? `${what}: ` : ''}stdin is not a terminal, so trove will not prompt; pass ${flagName}.`, 2);
}

export interface ConfirmOrRefuseOptions {
  /** The flag was given: go ahead without asking. */
  yes?: boolean | undefined;
  /** The flag that skips the question; "--yes" unless the command names another. */
  flag?: string | undefined;
}

/**
 * Resolves when the destructive action may go ahead: the flag was given, or the person at the
 * terminal said yes. Without a terminal and without the flag it throws (exit 2, naming the flag);
 * a "no" or Ctrl-C throws a CliError with code `canceled` (exit 1).
 */
export async function confirmOrRefuse(message: string, options: ConfirmOrRefuseOptions = {}): Promise<void> {
  const flag = options.flag ?? '--yes';
  if (options.yes) return;
  if (!isInteractive()) {
    throw new CliError(`${message} Refusing without confirmation: stdin is not a terminal; pass ${flag} to confirm.`, 2);
  }
  let answer: boolean;
  try {
    answer = await confirm({ message, default: false }, promptContext());
  } catch (err) {
    // Ctrl-C (ExitPromptError) or a closed terminal: the same as "no".
    if (err instanceof Error && /PromptError$/.test(err.name)) throw new CliError('Canceled; nothing was changed.', 1, 'canceled');
    throw err;
  }
  if (!answer) throw new CliError('Canceled; nothing was changed.', 1, 'canceled');
}
