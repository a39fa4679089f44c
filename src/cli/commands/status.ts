// `trove status`: is the daemon up, and what namespaces and collections does it hold.
import type { Collection, Health, Info, Namespace } from '../../client/index.js';
import { ApiClient, CliApiError, CliError, namespacePath, reportError } from '../client.js';
import { resolveKeyWithSource, resolveUrl, type GlobalOptions } from '../connection.js';
import { errOut, out } from '../io.js';

export interface StatusOptions {
  json?: boolean;
}

export async function runStatus(globalOpts: GlobalOptions, opts: StatusOptions): Promise<number> {
  const json = Boolean(opts.json);
  let url: string;
  try {
    url = resolveUrl(globalOpts);
  } catch (err) {
    return reportError(err, json);
  }

  let health: Health;
  try {
    health = await new ApiClient(url).request<Health>('GET', '/health', undefined, { auth: false });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (json) out().write(JSON.stringify({ url, up: false, error: message }) + '\n');
    else errOut().write(`trove daemon at ${url}: down\n${message}\n`);
    return err instanceof CliError ? err.exitCode : 1;
  }

  try {
    const { key, source } = await resolveKeyWithSource(globalOpts);
    const client = new ApiClient(url, key, source);
    const info = await client.request<Info>('GET', '/info');
    const namespaces = await client.listAll<Namespace>('/namespaces');
    const detailed = await Promise.all(
      namespaces.map(async (ns) => ({ ns, collections: await client.listAll<Collection>(`${namespacePath(ns.id)}/collections`) })),
    );

    if (json) {
      const body = {
        url,
        up: true,
        health: health.status,
        api_version: info.api_version,
        search_modes: info.search_modes,
        namespaces: detailed.map(({ ns, collections }) => ({
          id: ns.id,
          name: ns.name,
          usage: ns.usage,
          collections: collections.map((c) => ({ id: c.id, name: c.name, status: c.status, file_counts: c.file_counts })),
        })),
      };
      out().write(JSON.stringify(body) + '\n');
      return 0;
    }

    const lines = [`trove daemon at ${url}: up (health ${health.status}, API ${info.api_version}, search modes: ${info.search_modes.join(', ') || 'none'})`];
    if (detailed.length === 0) lines.push('No namespaces yet: try `trove ingest <folder> -n <namespace> -c <collection>`.');
    for (const { ns, collections } of detailed) {
      lines.push('', `namespace ${ns.name}  (${plural(collections.length, 'collection')}, ${plural(ns.usage.files, 'file')})`);
      if (collections.length === 0) lines.push('  (no collections)');
      const width = Math.max(0, ...collections.map((c) => c.name.length));
      for (const c of collections) {
        const n = c.file_counts;
        lines.push(`  ${c.name.padEnd(width)}  ${c.status.padEnd(8)}  ${n.ready} ready, ${n.pending} pending, ${n.indexing} indexing, ${n.failed} failed`);
      }
    }
    out().write(lines.join('\n') + '\n');
    return 0;
  } catch (err) {
    // The daemon answered /health but refused what followed (a key from another data dir, say): a
    // script still learns where the CLI looked and that a daemon is up there.
    if (json && err instanceof CliApiError) {
      out().write(JSON.stringify({ url, up: true, health: health.status, error: err.envelope().error }) + '\n');
      return err.exitCode;
    }
    if (!json) errOut().write(`trove daemon at ${url}: up (health ${health.status}), but:\n`);
    return reportError(err, json);
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
