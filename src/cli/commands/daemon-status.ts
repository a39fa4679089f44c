// `trove daemon status`: the daemon serving the data dir, asked over the operator channel. Exit 0
// when one runs; NO_DAEMON_EXIT_CODE (9) with a message when none does.
import type { inferRouterOutputs } from '@trpc/server';
import type { OperatorRouter } from '../../rpc/router.js';
import { reportError } from '../client.js';
import type { GlobalOptions } from '../connection.js';
import { out } from '../io.js';
import { withOperator } from './operator-call.js';

export type DaemonStatus = inferRouterOutputs<OperatorRouter>['status'];

export interface DaemonStatusOptions {
  json?: boolean;
}

export function formatDuration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (d > 0) return `${d}d ${h}h ${m}m`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s}s`;
  return `${s}s`;
}

/** "3 ready, 1 failed" from a count per status; `none` when empty. */
const counts = (byStatus: Record<string, number>): string =>
  Object.entries(byStatus)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ') || 'none';

const total = (byStatus: Record<string, number>): number => Object.values(byStatus).reduce((a, b) => a + b, 0);

export function formatStatus(s: DaemonStatus): string {
  const jobs = { queued: s.jobs.queued ?? 0, running: s.jobs.running ?? 0 };
  const queuedTypes = counts(s.queued_jobs_by_type);
  const research = { queued: s.research_runs.queued ?? 0, running: s.research_runs.running ?? 0 };
  const roots = s.file_roots.length === 0 ? ['none'] : s.file_roots.map((r) => `${r.path}  (${r.source === 'startup' ? 'start-up flag' : `granted ${r.granted_at}`}${r.exists ? '' : ', missing'})`);
  const lines = [
    `trove daemon running (pid ${s.pid}, up ${formatDuration(s.uptime_s)}, version ${s.version}${s.ready ? '' : ', not ready'})`,
    `  data dir:     ${s.data_dir}`,
    `  HTTP API:     ${s.http_url ?? 'not listening'}`,
    `  operator:     ${s.operator_socket ?? '-'}`,
    `  started:      ${s.started_at}`,
    `  indexer:      ${s.indexer.alive ? 'alive' : 'down (restarting)'}`,
    `  jobs:         ${jobs.queued} queued${jobs.queued > 0 ? ` (${queuedTypes})` : ''}, ${jobs.running} running`,
    `  research:     ${research.queued} queued, ${research.running} running`,
    `  namespaces:   ${s.namespaces.live}${s.namespaces.deleted ? ` (+${s.namespaces.deleted} deleted, restorable)` : ''}`,
    `  collections:  ${s.collections.live} (${counts(s.collections.by_status)})${s.collections.deleted ? ` (+${s.collections.deleted} deleted)` : ''}`,
    `  files:        ${total(s.files)} (${counts(s.files)})`,
    `  embedding:    ${s.embedding.model_id} (${s.embedding.provider})`,
    `  generation:   ${s.generation.model} (${s.generation.provider})`,
    `  file roots:   ${roots[0]}`,
    ...roots.slice(1).map((r) => `                ${r}`),
  ];
  return lines.join('\n') + '\n';
}

export async function runDaemonStatus(globalOpts: GlobalOptions, opts: DaemonStatusOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const status = await withOperator(globalOpts, (op) => op.client.status.query());
    out().write(json ? JSON.stringify(status) + '\n' : formatStatus(status));
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}
