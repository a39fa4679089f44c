// The package version, read from package.json at run time so that `trove --version` can never
// disagree with what npm installed (a copy written into the source would drift at the next release).
import { readFileSync } from 'node:fs';
import { packageFile } from './package-files.js';

const PACKAGE_JSON = packageFile('package.json');

export function packageVersion(manifest: string | URL = PACKAGE_JSON): string {
  try {
    const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown };
    if (typeof parsed.version === 'string' && parsed.version !== '') return parsed.version;
  } catch {
    // Fall through: a damaged install still answers --version instead of crashing.
  }
  return 'unknown';
}
