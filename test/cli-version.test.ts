// `trove --version` prints the package version, read from package.json at run time.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageVersion } from '../src/contract/version.js';
import { ROOT, runCli, runCliInProcess } from './helpers/cli.js';

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

t.test('--version and -V print the version in package.json and exit 0', async (t) => {
  // --version through the real entry, -V in-process (runCliInProcess).
  for (const flag of ['--version', '-V']) {
    const run = await (flag === '--version' ? runCli : runCliInProcess)([flag]);
    t.equal(run.code, 0, flag);
    t.equal(run.stdout, `${VERSION}\n`, flag);
    t.equal(run.stderr, '');
  }
});

t.test('the version comes from the manifest it is given, and a damaged one does not crash', async (t) => {
  const dir = t.testdir({ 'good.json': JSON.stringify({ name: 'trove', version: '9.8.7-rc.1' }), 'bad.json': '{ not json', 'none.json': '{}' });
  t.equal(packageVersion(pathToFileURL(path.join(dir, 'good.json'))), '9.8.7-rc.1');
  t.equal(packageVersion(pathToFileURL(path.join(dir, 'bad.json'))), 'unknown');
  t.equal(packageVersion(pathToFileURL(path.join(dir, 'none.json'))), 'unknown');
  t.equal(packageVersion(pathToFileURL(path.join(dir, 'missing.json'))), 'unknown');
});
