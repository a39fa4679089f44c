// The start-up floor for `npm run bench -- --only startup` (issue 15): a bare node process that
// opens a fresh database of the same kind as trove's (a private temporary dir, WAL, sqlite-vec
// loaded, an FTS5 table), listens on node:http on a free port, prints the same JSON "listening" line
// as `trove daemon start --json`, and answers GET /health. What trove adds on top is its own cost.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';

const dir = mkdtempSync(join(tmpdir(), 'trove-floor-'));
const db = new Database(join(dir, 'floor.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
sqliteVec.load(db);
db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(text, tokenize = 'unicode61')");
const health = db.prepare('SELECT count(*) AS n FROM passages_fts');

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    health.get();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
  } else res.writeHead(404).end();
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${port}` }) + '\n');
});
const stop = () => server.close(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
