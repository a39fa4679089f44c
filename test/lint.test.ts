// A promise nobody awaits is a bug the compiler lets through: with the store's calls async, an
// unawaited write, check or transaction fails silently or out of order. eslint.config.mjs holds the
// type-aware rules; this runs them over the shipped code and the benches.
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import t from 'tap';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

t.test('the lint sees a promise left floating', async (t) => {
  const probe = 'export async function save(): Promise<void> {}\nexport function handler(): void {\n  save();\n}\n';
  const [result] = await eslint.lintText(probe, { filePath: 'src/domain/context.ts' });
  t.same(
    result!.messages.map((m) => [m.ruleId, m.line]),
    [['@typescript-eslint/no-floating-promises', 3]],
    'the unawaited call is reported',
  );
});

t.test('src/, daemon/ and bench/ leave no promise floating', async (t) => {
  const results = await eslint.lintFiles(['src', 'daemon', 'bench']);
  const problems = results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(root.length)}:${m.line} ${m.ruleId ?? ''} ${m.message}`));
  t.ok(results.length > 250, `${results.length} files linted`);
  t.same(problems, [], 'no problems');
});
