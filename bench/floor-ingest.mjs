// The ingest floor for `npm run bench -- --only ingest` (issue 15): a node:http server taking one POST
// per document ({heading, body} JSON), each inserted into one FTS5 table in its own transaction, on a
// file database in a private temporary dir (WAL, synchronous=NORMAL). It answers after the commit, so
// when the last POST is answered every document is searchable. Prints the same "listening" line as
// `trove daemon start --json`; GET /health answers {status, docs} (the start-up check, the final count).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const dir = mkdtempSync(join(tmpdir(), 'trove-floor-ingest-'));
const db = new Database(join(dir, 'floor.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec("CREATE VIRTUAL TABLE docs USING fts5(heading, body, tokenize = 'porter unicode61 remove_diacritics 2')");
const insert = db.prepare('INSERT INTO docs (heading, body) VALUES (?, ?)');
const insertOne = db.transaction((doc) => Number(insert.run(String(doc.heading ?? ''), String(doc.body ?? '')).lastInsertRowid));
const count = db.prepare('SELECT count(*) FROM docs').pluck();

const send = (res, status, body) => res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/health') return send(res, 200, JSON.stringify({ status: 'ok', docs: count.get() }));
  if (req.method !== 'POST') return send(res, 404, '{}');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      send(res, 201, JSON.stringify({ id: insertOne(JSON.parse(Buffer.concat(chunks).toString('utf8'))) }));
    } catch (err) {
      send(res, 400, JSON.stringify({ error: String(err) }));
    }
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${server.address().port}` }) + '\n'));
const stop = () => server.close(() => (db.close(), rmSync(dir, { recursive: true, force: true }), process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
