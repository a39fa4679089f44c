// The seed of `trove daemon start --seed <file>` (docs/fixture-mode.md): what a test fixture starts
// with. Each entry takes the fields its API request takes, plus the namespace and collection it
// belongs to; the whole document is checked before anything is created, so a mistake stops
// start-up with the path of the bad entry instead of leaving a half-seeded daemon.
import { z } from 'zod';
import {
  AccessControl,
  CreateAccessRuleRequest,
  CreateCollectionRequest,
  CreateNamespaceRequest,
  FilePath,
  FolderPath,
  InlineSource,
  KeyScope,
  Metadata,
  ProcessingSchema,
  ResourceName,
  UriSource,
} from './schemas.js';

export const SeedNamespace = z.strictObject({
  name: ResourceName,
  display_name: CreateNamespaceRequest.shape.display_name,
});

export const SeedCollection = z.strictObject({
  namespace: ResourceName,
  name: ResourceName,
  display_name: CreateCollectionRequest.shape.display_name,
  access_control: AccessControl.optional(),
  processing: ProcessingSchema.optional(),
});

export const SeedKey = z.strictObject({
  name: ResourceName,
  /** Stored as a hash like any key's; it must look like a minted secret (src/domain/keys.ts). */
  secret: z.string().min(1),
  scope: KeyScope,
});

export const SeedRule = z
  .strictObject({
    namespace: ResourceName,
    collection: ResourceName,
    folder: FolderPath.optional(),
    file: FilePath.optional(),
    readers: CreateAccessRuleRequest.shape.readers,
    sealed: z.boolean().optional(),
  })
  .refine((r) => (r.folder === undefined) !== (r.file === undefined), 'set exactly one of folder and file')
  .refine((r) => !r.sealed || r.folder !== undefined, { message: 'only folder rules can be sealed', path: ['sealed'] });

export const SeedFile = z
  .strictObject({
    namespace: ResourceName,
    collection: ResourceName,
    path: FilePath,
    /** The file's text, added as an inline source. */
    text: InlineSource.shape.text.optional(),
    /** A local file, relative to the seed file's folder (or absolute), uploaded with its bytes. */
    file: z.string().min(1).optional(),
    /** A `file://`, `http://` or `https://` source the daemon fetches (the API's rules apply). */
    uri: UriSource.shape.uri.optional(),
    content_type: UriSource.shape.content_type,
    metadata: Metadata.optional(),
  })
  .refine((f) => [f.text, f.file, f.uri].filter((v) => v !== undefined).length === 1, 'set exactly one of text, file and uri');

const collectionRef = (namespace: string, collection: string) => `${namespace}/${collection}`;

export const SeedSchema = z
  .strictObject({
    /** Report "listening" only once every seeded file is indexed, so a test can search at once. */
    wait: z.boolean().default(true),
    namespaces: z.array(SeedNamespace).default([]),
    collections: z.array(SeedCollection).default([]),
    keys: z.array(SeedKey).default([]),
    rules: z.array(SeedRule).default([]),
    files: z.array(SeedFile).default([]),
  })
  .superRefine((seed, ctx) => {
    const problem = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    /** Reports the second and later entries with the same identity, naming the first. */
    const firstOf = new Map<string, number>();
    const unique = (list: string, index: number, identity: string, path: (string | number)[], what: string) => {
      const key = `${list}\u0000${identity}`;
      const first = firstOf.get(key);
      if (first === undefined) firstOf.set(key, index);
      else problem([list, index, ...path], `duplicate ${what} (first at ${list}[${first}])`);
    };

    const namespaces = new Set<string>();
    seed.namespaces.forEach((ns, i) => {
      unique('namespaces', i, ns.name, ['name'], `namespace '${ns.name}'`);
      namespaces.add(ns.name);
    });
    const namespaceDeclared = (name: string, path: (string | number)[]) => {
      if (namespaces.has(name)) return true;
      problem(path, `namespace '${name}' is not declared under namespaces`);
      return false;
    };

    const collections = new Map<string, z.output<typeof SeedCollection>>();
    seed.collections.forEach((col, i) => {
      namespaceDeclared(col.namespace, ['collections', i, 'namespace']);
      unique('collections', i, collectionRef(col.namespace, col.name), ['name'], `collection '${collectionRef(col.namespace, col.name)}'`);
      collections.set(collectionRef(col.namespace, col.name), col);
    });
    const collectionDeclared = (list: string, i: number, namespace: string, collection: string) => {
      if (!namespaceDeclared(namespace, [list, i, 'namespace'])) return undefined;
      const col = collections.get(collectionRef(namespace, collection));
      if (!col) problem([list, i, 'collection'], `collection '${collectionRef(namespace, collection)}' is not declared under collections`);
      return col;
    };

    const keyOfPrefix = new Map<string, number>();
    seed.keys.forEach((key, i) => {
      if (key.name === 'cluster') problem(['keys', i, 'name'], "'cluster' is the daemon's own key; give this key another name");
      unique('keys', i, key.name, ['name'], `key name '${key.name}'`);
      // Keys are found by their secret's prefix, so two keys cannot share one (nor, then, a secret).
      const prefix = /^trove_([^_]+)_/.exec(key.secret)?.[1];
      const sharing = prefix === undefined ? undefined : keyOfPrefix.get(prefix);
      if (sharing !== undefined) problem(['keys', i, 'secret'], `has the same prefix as the secret of keys[${sharing}]; each key's secret needs a prefix of its own`);
      else if (prefix !== undefined) keyOfPrefix.set(prefix, i);
      const scope = key.scope;
      if (scope.kind === 'cluster') return;
      if (!namespaceDeclared(scope.namespace, ['keys', i, 'scope', 'namespace'])) return;
      if (scope.kind === 'collection') {
        scope.collections.forEach((name, j) => {
          if (!collections.has(collectionRef(scope.namespace, name))) {
            problem(['keys', i, 'scope', 'collections', j], `collection '${collectionRef(scope.namespace, name)}' is not declared under collections`);
          }
        });
      }
    });

    seed.rules.forEach((rule, i) => {
      const col = collectionDeclared('rules', i, rule.namespace, rule.collection);
      if (col && col.access_control !== 'enforced') {
        problem(['rules', i, 'collection'], `collection '${collectionRef(rule.namespace, rule.collection)}' needs access_control: enforced for access rules`);
      }
      const target = rule.folder !== undefined ? `folder ${rule.folder}` : `file ${rule.file}`;
      unique('rules', i, `${collectionRef(rule.namespace, rule.collection)} ${target}`, [], `rule on ${target} of '${collectionRef(rule.namespace, rule.collection)}'`);
    });

    seed.files.forEach((file, i) => {
      collectionDeclared('files', i, file.namespace, file.collection);
      unique('files', i, `${collectionRef(file.namespace, file.collection)}${file.path}`, ['path'], `file '${file.path}' in '${collectionRef(file.namespace, file.collection)}'`);
    });
  });

/** A seed as the daemon uses it (defaults filled in). */
export type Seed = z.output<typeof SeedSchema>;
/** A seed as written: what a YAML or JSON seed file, or `startTrove({ seed })`, holds. */
export type SeedObject = z.input<typeof SeedSchema>;
