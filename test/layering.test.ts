// The layers (issue 17, item 5): contract → store → domain → transports (http, rpc, mcp) → clients
// (client, cli, tui); daemon/ is the composition root and may import anything. A lower layer never
// imports a higher one, and a transport reaches the store through the domain (types excepted).
// This reads every import of src/ and daemon/ and fails naming each one that breaks the table.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Allowed {
  /** Layers whose modules it may import. */
  values: readonly string[];
  /** Layers it may import types from only (`import type`), erased at run time. */
  types?: readonly string[];
  /** Files of another layer it may import, beyond `values` (path from the repository root). */
  files?: readonly string[];
}

/** Who may import whom. Each layer may import its own modules. */
const LAYERS: Record<string, Allowed> = {
  contract: { values: [] },
  store: { values: ['contract'] },
  domain: { values: ['contract', 'store'] },
  http: { values: ['contract', 'domain'], types: ['store'] },
  rpc: { values: ['contract', 'domain'], types: ['store'] },
  // The MCP server is mounted on the HTTP app and calls its router in-process.
  mcp: { values: ['contract', 'domain', 'http'], types: ['store'] },
  client: { values: ['contract'] },
  // `trove daemon start` and `trove mcp` run the daemon and the MCP server in the CLI's process;
  // the operator channel's client lives with its server in rpc/.
  cli: { values: ['contract', 'client', 'tui', 'mcp', 'daemon'], types: ['rpc'], files: ['src/rpc/client.ts'] },
  tui: { values: ['contract', 'client', 'cli'], types: ['rpc'], files: ['src/rpc/client.ts'] },
  testing: { values: ['contract', 'daemon'] },
  index: { values: ['client'] },
  daemon: { values: ['contract', 'store', 'domain', 'http', 'rpc', 'mcp', 'client'] },
};

function layerOf(file: string): string | null {
  const parts = file.split('/');
  if (parts[0] === 'daemon') return 'daemon';
  if (parts[0] !== 'src') return null;
  if (parts.length === 2) return 'index';
  return parts[1]!;
}

export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** Relative imports of a source text: static, re-exports and dynamic, each marked type-only or not. */
function importsOf(file: string, text: string): ImportEdge[] {
  const out: ImportEdge[] = [];
  const re = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"](\.[^'"]+)['"]/g;
  for (const m of text.matchAll(re)) {
    const spec = m[3] ?? m[4] ?? m[5]!;
    const target = normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts');
    // `import { type A, type B } from` is erased as wholly as `import type { A, B } from`.
    const names = /^\{([^}]*)\}$/.exec(m[2]?.trim() ?? '')?.[1]?.split(',').map((n) => n.trim()).filter(Boolean) ?? [];
    const typeOnly = Boolean(m[1]) || (names.length > 0 && names.every((n) => n.startsWith('type ')));
    out.push({ from: file, to: target, typeOnly });
  }
  return out;
}

/** The edges that break the table, as sentences. */
export function violations(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const from = layerOf(e.from);
    const to = layerOf(e.to.replace(/\.tsx?$/, '.ts'));
    if (from === null || to === null || from === to) continue;
    const allowed = LAYERS[from];
    if (!allowed) {
      out.push(`${e.from}: layer '${from}' is not in the table`);
      continue;
    }
    const target = e.to.replace(/\.tsx$/, '.ts');
    if (allowed.values.includes(to) || allowed.files?.includes(target)) continue;
    if (e.typeOnly && allowed.types?.includes(to)) continue;
    out.push(`${e.from} imports ${e.to}${e.typeOnly ? ' (types)' : ''}: ${from} may not import ${to}`);
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

t.test('no layer imports a higher one', async (t) => {
  const files = [...sourceFiles('src'), ...sourceFiles('daemon')];
  t.ok(files.length > 100, `${files.length} source files read`);
  const edges = files.flatMap((f) => importsOf(f, readFileSync(join(root, f), 'utf8')));
  t.ok(edges.length > 500, `${edges.length} relative imports`);
  for (const f of files) t.ok(layerOf(f) !== null && LAYERS[layerOf(f)!], `${f} belongs to a layer of the table`);
  t.same(violations(edges), [], 'every import follows the table');
});

t.test('the check catches what it is for', async (t) => {
  const edge = (from: string, spec: string, text = `import { x } from '${spec}';`) => importsOf(from, text);
  t.same(violations(edge('src/store/sqlite/files.ts', '../../domain/files.js')).length, 1, 'the store importing the domain');
  t.same(violations(edge('src/rpc/router.ts', '../store/sqlite/events.js')).length, 1, 'a transport calling the store');
  t.same(violations(edge('src/rpc/router.ts', '../store/sqlite/events.js', "import type { EventRow } from '../store/sqlite/events.js';")), [], 'a transport naming a store type');
  t.same(violations(edge('src/rpc/router.ts', '../store/sqlite/events.js', "import { type EventRow, type Db } from '../store/sqlite/events.js';")), [], 'inline type names too');
  t.same(violations(edge('src/rpc/router.ts', '../store/sqlite/events.js', "import { type EventRow, eventsAfter } from '../store/sqlite/events.js';")).length, 1, 'but not a value beside them');
  t.same(violations(edge('src/cli/commands/rules.ts', '../../domain/access/rules.js')).length, 1, 'the CLI importing the domain');
  t.same(violations(edge('src/tui/highlight.ts', '../domain/search/query-text.js', "const m = await import('../domain/search/query-text.js');")).length, 1, 'a dynamic import too');
  t.same(violations(edge('src/contract/errors.ts', '../store/sqlite/db.js', "export { x } from '../store/sqlite/db.js';")).length, 1, 'a re-export too');
  t.same(violations(edge('daemon/runtime.ts', '../src/store/sqlite/db.js')), [], 'the composition root may import anything');
});
