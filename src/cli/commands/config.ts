// `trove config get [key]` / `trove config set <key> <value>` / `trove config unset <key>`: the
// daemon's <data-dir>/config.json, through the operator channel (which validates keys and values
// and masks secrets). Changes apply when the daemon restarts.
import type { inferRouterOutputs } from '@trpc/server';
import type { OperatorRouter } from '../../rpc/router.js';
import { reportError } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { out } from '../io.js';
import { withOperator } from './operator-call.js';

type ConfigView = inferRouterOutputs<OperatorRouter>['config']['get'];
type ConfigChange = inferRouterOutputs<OperatorRouter>['config']['set'];

export interface ConfigOptions {
  json?: boolean;
}

const show = (value: unknown): string => (value === null || value === undefined ? '(unset)' : typeof value === 'string' ? value : JSON.stringify(value));

function formatView(view: ConfigView, single: boolean): string {
  const lines = [`config file: ${view.file}${view.exists ? '' : ' (not created yet: every value is its default)'}`];
  const width = Math.max(...view.entries.map((e) => e.key.length));
  for (const e of view.entries) {
    const running = view.running[e.key];
    const notes = [
      running !== undefined && show(running) !== show(e.value) ? `in use: ${show(running)}` : '',
      e.overridden_by ? `overridden by ${e.overridden_by} in the daemon's environment` : '',
      e.description === null ? 'not a setting trove reads' : '',
    ].filter(Boolean);
    lines.push(`${e.key.padEnd(width)}  ${show(e.value)}${notes.length ? `   (${notes.join('; ')})` : ''}`);
  }
  if (!single) lines.push('', 'Set one with `trove config set <key> <value>`; changes apply when the daemon restarts.');
  return lines.join('\n') + '\n';
}

function formatChange(c: ConfigChange): string {
  const lines = c.changed
    ? [`${c.key} = ${show(c.value)} (was ${show(c.previous)}) in ${c.file}`, 'Restart the daemon to apply it (`trove daemon stop`, then `trove daemon start`).']
    : [`${c.key} is already ${show(c.value)}: nothing changed.`];
  if (c.overridden_by) lines.push(`Note: ${c.overridden_by} is set in the daemon's environment and wins over config.json.`);
  return lines.join('\n') + '\n';
}

export async function runConfigGet(key: string | undefined, globalOpts: GlobalOptions, opts: ConfigOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const view = await withOperator(globalOpts, (op) => op.client.config.get.query(key === undefined ? undefined : { key }));
    out().write(json ? JSON.stringify(view) + '\n' : formatView(view, key !== undefined));
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

export async function runConfigSet(key: string, value: string, globalOpts: GlobalOptions, opts: ConfigOptions): Promise<number> {
  return change(key, value, globalOpts, opts);
}

export async function runConfigUnset(key: string, globalOpts: GlobalOptions, opts: ConfigOptions): Promise<number> {
  return change(key, null, globalOpts, opts);
}

async function change(key: string, value: string | null, globalOpts: GlobalOptions, opts: ConfigOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const result = await withOperator(globalOpts, (op) => op.client.config.set.mutate({ key, value }));
    out().write(json ? JSON.stringify(result) + '\n' : formatChange(result));
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}
