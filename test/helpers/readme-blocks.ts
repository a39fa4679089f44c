// The README's marked code blocks (`<!-- readme:NAME ... -->` right above a fenced block), so the
// tests that prove them use the README's own text rather than a copy that could drift.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './cli.js';

export function readmeBlock(name: string): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const marker = readme.indexOf(`<!-- readme:${name} `);
  if (marker < 0) throw new Error(`README.md has no <!-- readme:${name} --> block`);
  const fence = /```[a-z]*\n([\s\S]*?)```/.exec(readme.slice(marker));
  if (!fence?.[1]) throw new Error(`README.md's readme:${name} marker is not followed by a code block`);
  return fence[1];
}
