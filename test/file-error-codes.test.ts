// The closed set of file error codes (src/contract/errors.ts) against the document that promises
// it: docs/decisions.md's "File errors". (Warning codes are held to WARNING_CODES by their type.)
import { readFileSync } from 'node:fs';
import t from 'tap';
import { FILE_ERROR_CODES } from '../src/contract/errors.js';

t.test("FILE_ERROR_CODES is decisions.md's list of file errors, plus the job-only superseded", async (t) => {
  const decisions = readFileSync(new URL('../../docs/decisions.md', import.meta.url), 'utf8');
  const bullet = /- \*\*File errors\*\*[^]*?(?=\n- \*\*)/.exec(decisions)?.[0] ?? '';
  const documented = [...bullet.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).filter((code) => code !== 'file');
  t.ok(documented.length >= 8, `found the list (${documented.join(', ')})`);
  t.same([...documented].sort(), Object.keys(FILE_ERROR_CODES).filter((code) => code !== 'superseded').sort());
});

