// Lists the files of a folder the way `git add .` would see them: .git skipped, .gitignore honoured
// at every level, symlinks followed only while they stay inside the folder. Unlike git, dotfiles and
// dot-folders are left out unless asked for (`--hidden`), and files that usually hold secrets are
// left out unless asked for by name (`--include-secrets`): a mirror makes every byte searchable by
// anyone holding a key to the collection, and `.env` ending up there is a leak, not a feature.
import { open, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import ignore from 'ignore';
import { filePathProblem } from '../contract/paths.js';
import { contentTypeFromPath } from '../contract/content-types.js';

/** The daemon's limit on indexed files (INDEXING_LIMITS.maxFileBytes in src/domain/limits.ts, which the CLI may not import). */
export const MAX_FILE_BYTES = 256 * 1024 * 1024;

const SNIFF_BYTES = 8192;

export interface WalkedFile {
  absPath: string;
  /** Collection path: '/' + the path relative to the folder, with forward slashes. */
  path: string;
  size: number;
  contentType: string;
}

export interface SkippedEntry {
  path: string;
  reason: string;
}

/** Left out by policy (hidden, secret-looking or matching --exclude), not by accident: the mirror treats them as absent. */
export interface ExcludedEntry {
  path: string;
  kind: 'hidden' | 'secret' | 'pattern';
  /** A whole folder (nothing under it was looked at). */
  folder: boolean;
}

export interface WalkResult {
  files: WalkedFile[];
  /**
   * Files and folders that could not be taken (unreadable, too large, a symlink leading out): the
   * mirror leaves their copies in the collection alone (ignored ones are not listed).
   */
  skipped: SkippedEntry[];
  /** Hidden and secret-looking entries (not listed when .gitignore ignores them anyway). */
  excluded: ExcludedEntry[];
}

export interface WalkOptions {
  maxFileBytes?: number;
  /** Take dotfiles and dot-folders too (`--hidden`). */
  hidden?: boolean;
  /** Take files whose names usually hold secrets too (`--include-secrets`). */
  secrets?: boolean;
  /** Patterns to leave out (`--exclude`, and the saved defaults' `exclude`), .gitignore syntax relative to the folder. */
  exclude?: readonly string[];
}

/** Tells whether a path (relative to the folder, forward slashes) matches one of the `--exclude` patterns. */
export type ExcludeMatcher = (rel: string, isDir: boolean) => boolean;

/**
 * The `--exclude` patterns as one matcher, in .gitignore syntax (the rules people already write:
 * `*.gz`, `build/`, `/drafts/**`), so a pattern means what it would mean in the folder's .gitignore.
 */
export function excludeMatcher(patterns: readonly string[] = []): ExcludeMatcher {
  const usable = patterns.map((p) => p.trim()).filter((p) => p !== '' && !p.startsWith('#'));
  if (usable.length === 0) return () => false;
  const rules = ignore({ ignorecase: false }).add(usable);
  return (rel, isDir) => rules.ignores(isDir ? `${rel}/` : rel);
}

/**
 * File names that usually hold credentials. The one list (walk, watch and docs refer here): each is
 * a format people keep private keys, tokens or passwords in, and none is a document anyone searches.
 * Matched against the file's name, case-insensitively. `--hidden` does not let these in (a `.env` is
 * a dotfile, and `--hidden` is wanted for `.github/` docs); only `--include-secrets` does.
 */
export const SECRET_FILE_PATTERNS: readonly RegExp[] = [
  /^\.env$/i, // dotenv files: API keys and passwords for local runs
  /^\.env\..+$/i, // .env.local, .env.production, … (.env.example too: better one file too few)
  /\.pem$/i, // TLS and SSH private keys / certificates
  /\.key$/i, // private keys (openssl, TLS)
  /^id_(rsa|dsa|ecdsa|ed25519)(\..*)?$/i, // SSH key pairs (id_rsa, id_ed25519.pub, …)
  /\.(p12|pfx|jks|keystore)$/i, // PKCS#12 and Java key stores
  /^\.npmrc$/i, // npm registry tokens
  /^\.pypirc$/i, // PyPI tokens
  /^[._]netrc$/i, // machine passwords for curl, git, ftp
  /^\.pgpass$/i, // PostgreSQL passwords
  /^\.htpasswd$/i, // HTTP basic-auth password hashes
  /^credentials(\.(json|ya?ml|toml|ini|xml))?$/i, // AWS, gcloud and other CLIs' credentials files
  /^(client_secret|service[-_]account).*\.json$/i, // Google OAuth client secrets, service account keys
];

export function isSecretFileName(name: string): boolean {
  return SECRET_FILE_PATTERNS.some((pattern) => pattern.test(name));
}

export const isHiddenName = (name: string): boolean => name.startsWith('.');

/** The rules of one .gitignore, which apply to paths relative to the folder holding it. */
export interface IgnoreLayer {
  base: string;
  rules: ignore.Ignore;
}

export async function walkFolder(folder: string, options: WalkOptions = {}): Promise<WalkResult> {
  const maxFileBytes = options.maxFileBytes ?? MAX_FILE_BYTES;
  const excluded: ExcludedEntry[] = [];
  const root = await realpath(resolve(folder));
  if (!(await stat(root)).isDirectory()) throw new Error(`${folder} is not a folder.`);
  const files: WalkedFile[] = [];
  const skipped: SkippedEntry[] = [];
  const excludedByPattern = excludeMatcher(options.exclude);

  const visit = async (absDir: string, relDir: string, inherited: IgnoreLayer[], ancestors: Set<string>): Promise<void> => {
    let entries;
    try {
      entries = await readdir(absDir, { withFileTypes: true });
    } catch (err) {
      if (relDir === '') throw err;
      skipped.push({ path: `/${relDir}`, reason: `folder cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const layers = [...inherited];
    if (entries.some((e) => e.name === '.gitignore' && (e.isFile() || e.isSymbolicLink()))) {
      const text = await readFile(join(absDir, '.gitignore'), 'utf8').catch(() => null);
      if (text !== null) layers.push({ base: relDir, rules: ignore({ ignorecase: false }).add(text) });
    }

    for (const entry of entries) {
      // Git's own files are repository plumbing, not documents.
      if (entry.name === '.git' || entry.name === '.gitignore') continue;
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
      const abs = join(absDir, entry.name);
      let kind: 'file' | 'dir' | 'other';
      let realDir = abs;
      if (entry.isSymbolicLink()) {
        const target = await realpath(abs).catch(() => null);
        if (target === null) {
          skipped.push({ path: `/${rel}`, reason: 'broken symlink' });
          continue;
        }
        if (target !== root && !target.startsWith(root + sep)) {
          skipped.push({ path: `/${rel}`, reason: `symlink leads outside the folder (to ${target})` });
          continue;
        }
        const targetStat = await stat(target);
        kind = targetStat.isDirectory() ? 'dir' : targetStat.isFile() ? 'file' : 'other';
        realDir = target;
      } else {
        kind = entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : 'other';
      }
      if (isIgnored(layers, rel, kind === 'dir')) continue;
      const policy = excludedByPattern(rel, kind === 'dir') ? 'pattern' : exclusionOf(entry.name, kind === 'dir', options);
      if (policy) {
        excluded.push({ path: `/${rel}`, kind: policy, folder: kind === 'dir' });
        continue;
      }

      if (kind === 'other') {
        skipped.push({ path: `/${rel}`, reason: 'not a regular file' });
      } else if (kind === 'dir') {
        if (entry.isSymbolicLink()) {
          if (ancestors.has(realDir)) {
            skipped.push({ path: `/${rel}`, reason: 'symlink loops back to a folder that contains it' });
            continue;
          }
        } else {
          realDir = await realpath(abs);
        }
        await visit(abs, rel, layers, new Set([...ancestors, realDir]));
      } else {
        const path = `/${rel}`;
        const problem = filePathProblem(path);
        if (problem) {
          skipped.push({ path, reason: `not a valid collection path: ${problem}` });
          continue;
        }
        const { size } = await stat(abs);
        if (size > maxFileBytes) {
          skipped.push({ path, reason: `larger than ${formatBytes(maxFileBytes)} (${formatBytes(size)})` });
          continue;
        }
        files.push({ absPath: abs, path, size, contentType: contentTypeFromPath(rel) ?? (await sniffContentType(abs)) });
      }
    }
  };

  await visit(root, '', [], new Set([root]));
  return { files, skipped, excluded };
}

/** Why a file or folder of this name is left out by policy, or null when it is taken. */
export function exclusionOf(name: string, isDir: boolean, options: Pick<WalkOptions, 'hidden' | 'secrets'>): 'hidden' | 'secret' | null {
  if (!isDir && !options.secrets && isSecretFileName(name)) return 'secret';
  if (!options.hidden && isHiddenName(name)) return 'hidden';
  return null;
}

/**
 * Git's precedence: the .gitignore nearest the path wins, and within one file the last matching rule.
 * A directory whose rules say nothing defers to its parent's.
 */
export function isIgnored(layers: readonly IgnoreLayer[], rel: string, isDir: boolean): boolean {
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i]!;
    const local = layer.base ? rel.slice(layer.base.length + 1) : rel;
    const verdict = layer.rules.test(isDir ? `${local}/` : local);
    if (verdict.ignored) return true;
    if (verdict.unignored) return false;
  }
  return false;
}

/**
 * Text as the daemon's detection judges it (src/domain/ingest/detect.ts): a UTF-16 byte order mark,
 * or no control character that text does not hold (tab, line breaks, form feed and escape are fine).
 * Random bytes hold such a character in almost every 100; a NUL test alone let a third of them pass.
 */
function looksLikeText(head: Buffer): boolean {
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) return true;
  for (const byte of head) if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0b && byte !== 0x0c && byte !== 0x0d && byte !== 0x1b) return false;
  return true;
}

/**
 * For names without a known extension: text unless the first bytes look binary; binary bytes are named
 * by their signature (a PDF or a gzip without its extension) so that the plan can tell a document it
 * can send from an archive it cannot.
 */
export async function sniffContentType(absPath: string): Promise<string> {
  const handle = await open(absPath, 'r');
  let head: Buffer;
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  if (looksLikeText(head)) return 'text/plain';
  // Loaded only for a binary file without a known extension: most folders never need it.
  const { fileTypeFromBuffer } = await import('file-type');
  return (await fileTypeFromBuffer(head))?.mime ?? 'application/octet-stream';
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}
