// Fixture corpora and question sets kept as JSON Lines under fixtures/<folder>/.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures');

/** A reader of fixtures/<folder>/<name>.jsonl files: one parsed object a line. */
export function jsonlFixtures(folder: string): <T>(name: string) => T[] {
  return <T>(name: string): T[] =>
    readFileSync(join(FIXTURES, folder, name), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as T);
}
