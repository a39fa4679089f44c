// The daemon's configuration (issue 17, item 1): one resolveConfig(flags, env, file) with one
// precedence, flag > environment > config.json > default, and one schema for config.json, checked
// whole at start with a message that names the file and the field.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { DEFAULT_DRAIN_SECONDS, DEFAULT_HOST, DEFAULT_PORT, loadConfig, readConfigFile, resolveConfig, resolveDataDir } from '../daemon/config.js';
import { defaultDataDir } from '../daemon/paths.js';
import { CONFIG_KEYS, ConfigFileSchema } from '../src/domain/config-file.js';
import { defaultCacheDir } from '../src/domain/embed/config.js';
import { runCli } from './helpers/cli.js';

const work = mkdtempSync(path.join(tmpdir(), 'trove-daemon-config-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));
let dirs = 0;
/** A data dir holding this config.json text (or none). */
function dataDirWith(text?: string): string {
  const dir = path.join(work, `d${++dirs}`);
  mkdirSync(dir);
  if (text !== undefined) writeFileSync(path.join(dir, 'config.json'), text);
  return dir;
}
const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

t.test('flag > environment > default, for what has a flag', async (t) => {
  const env = { TROVE_HOST: '0.0.0.0', TROVE_PORT: '8000', TROVE_SHUTDOWN_DRAIN_SECONDS: '3', TROVE_WEBHOOK_RETRY_SCALE: '0.5', TROVE_ALLOW_INSECURE_WEBHOOKS: '1', TROVE_ALLOW_PRIVATE_SOURCES: '1', TROVE_DATA_DIR: '/srv/env-dir' };
  const flags = { host: '::1', port: '9000', drainSeconds: '0', webhookRetryScale: '0.01', allowInsecureWebhooks: true, allowPrivateSources: true, dataDir: '/srv/flag-dir' };

  const byFlag = resolveConfig(flags, env, {});
  t.match(byFlag, { host: '::1', port: 9000, drainSeconds: 0, dataDir: '/srv/flag-dir', allowPrivateSources: true, webhooks: { retryScale: 0.01, allowInsecure: true } }, 'the flag wins');

  const byEnv = resolveConfig({}, env, {});
  t.match(byEnv, { host: '0.0.0.0', port: 8000, drainSeconds: 3, dataDir: '/srv/env-dir', allowPrivateSources: true, webhooks: { retryScale: 0.5, allowInsecure: true } }, 'then the environment');

  const byDefault = resolveConfig({}, {}, {});
  t.match(byDefault, { host: DEFAULT_HOST, port: DEFAULT_PORT, drainSeconds: DEFAULT_DRAIN_SECONDS, dataDir: defaultDataDir(), ephemeral: false, insecure: false, allowPrivateSources: false, clusterKey: undefined, fileRoots: [] }, 'then the default');
  t.same(byDefault.webhooks, { allowInsecure: false, retryScale: 1, timeoutMs: 15_000 });

  const emptyVariables = resolveConfig({}, { TROVE_HOST: '', TROVE_PORT: '', TROVE_DATA_DIR: '', TROVE_CLUSTER_KEY: '' }, {});
  t.match(emptyVariables, { host: DEFAULT_HOST, port: DEFAULT_PORT, dataDir: defaultDataDir(), clusterKey: undefined }, 'an empty variable counts as unset');
  t.equal(resolveConfig({}, { TROVE_ALLOW_PRIVATE_SOURCES: 'yes' }, {}).allowPrivateSources, false, 'a switch variable is on only as 1');
  t.equal(resolveDataDir({ dataDir: 'relative/dir' }, {}), path.resolve('relative/dir'), 'the data dir is made absolute');
});

t.test('--allow-file-root adds to TROVE_FILE_ROOTS', async (t) => {
  t.same(resolveConfig({ allowFileRoot: ['/c'] }, { TROVE_FILE_ROOTS: '/a:/b' }, {}).fileRoots, ['/a', '/b', '/c']);
  t.same(resolveConfig({}, { TROVE_FILE_ROOTS: '/a::' }, {}).fileRoots, ['/a']);
  t.equal(resolveConfig({}, { TROVE_CLUSTER_KEY: 'secret-from-env' }, {}).clusterKey, 'secret-from-env', 'the cluster key comes from the environment only');
});

t.test('environment > config.json > default, for what config.json holds', async (t) => {
  const file = ConfigFileSchema.parse({
    embedding: { provider: 'ollama', model: 'file-model', url: 'http://file:1', dimensions: 768, apiKeyEnv: 'FILE_KEY', cacheDir: '/file/cache' },
    vectors: { memory: '1GB' },
    generation: { provider: 'openai', model: 'file-gen', url: 'http://file:2/v1', vision: true, apiKeyEnv: 'GEN_KEY' },
  });
  const env = {
    TROVE_EMBEDDING_PROVIDER: 'openai',
    TROVE_EMBEDDING_MODEL: 'env-model',
    TROVE_EMBEDDING_URL: 'http://env:1',
    TROVE_EMBEDDING_DIMENSIONS: '1024',
    TROVE_CACHE_DIR: '/env/cache',
    TROVE_VECTOR_MEMORY: '10%',
    TROVE_GENERATION_PROVIDER: 'extractive',
    TROVE_GENERATION_MODEL: 'env-gen',
    TROVE_GENERATION_URL: 'http://env:2/v1',
    TROVE_GENERATION_VISION: 'no',
  };

  const byEnv = resolveConfig({}, env, file);
  t.same(byEnv.embedding, { provider: 'openai', model: 'env-model', url: 'http://env:1', dimensions: 1024, apiKeyEnv: 'FILE_KEY', cacheDir: '/env/cache' }, 'the environment wins (an API key variable is named in the file only)');
  t.same(byEnv.generation, { provider: 'extractive', model: 'env-gen', url: 'http://env:2/v1', vision: false, apiKeyEnv: 'GEN_KEY' });
  t.equal(byEnv.vectorMemory.setting, '10%');

  const byFile = resolveConfig({}, {}, file);
  t.same(byFile.embedding, { provider: 'ollama', model: 'file-model', url: 'http://file:1', dimensions: 768, apiKeyEnv: 'FILE_KEY', cacheDir: '/file/cache' }, 'then config.json');
  t.same(byFile.generation, { provider: 'openai', model: 'file-gen', url: 'http://file:2/v1', vision: true, apiKeyEnv: 'GEN_KEY' });
  t.same(byFile.vectorMemory, { setting: '1GB', bytes: 2 ** 30 });

  const byDefault = resolveConfig({}, {}, {});
  t.same(byDefault.embedding, { provider: 'builtin', model: 'builtin:glove-sg-100d-sif', url: undefined, dimensions: undefined, apiKeyEnv: 'TROVE_EMBEDDING_API_KEY', cacheDir: defaultCacheDir({}) }, 'then the defaults');
  t.same(byDefault.generation, { provider: 'extractive', model: 'mmr-v1', url: undefined, vision: false, apiKeyEnv: 'TROVE_GENERATION_API_KEY' });
  t.equal(byDefault.vectorMemory.setting, '25%');

  // Model and URL default per provider: the provider may come from elsewhere than the rest.
  t.match(resolveConfig({}, { TROVE_EMBEDDING_PROVIDER: 'ollama' }, {}).embedding, { model: 'nomic-embed-text', url: 'http://127.0.0.1:11434' });
  t.match(resolveConfig({}, { TROVE_GENERATION_PROVIDER: 'openai' }, {}).generation, { model: 'gpt-4o-mini', url: 'https://api.openai.com/v1' });
  t.match(resolveConfig({}, { TROVE_EMBEDDING_PROVIDER: 'openai' }, ConfigFileSchema.parse({ embedding: { url: 'http://file:1' } })).embedding, { provider: 'openai', url: 'http://file:1', model: 'text-embedding-3-small' });
  t.equal(resolveConfig({}, { TROVE_GENERATION_VISION: 'TRUE' }, {}).generation.vision, true, 'a flag variable reads true/yes/1 in any case');
  t.equal(resolveConfig({}, { TROVE_CACHE_DIR: 'relative/cache' }, {}).embedding.cacheDir, 'relative/cache', "TROVE_CACHE_DIR is the daemon's own path, taken as given");
});

t.test('a bad variable is named with the key it overrides', async (t) => {
  t.throws(() => resolveConfig({}, { TROVE_EMBEDDING_PROVIDER: 'glove' }, {}), { message: 'embedding.provider (TROVE_EMBEDDING_PROVIDER) must be one of builtin, openai, ollama, transformers (got "glove").' });
  t.throws(() => resolveConfig({}, { TROVE_GENERATION_PROVIDER: 'gpt' }, {}), { message: /^generation\.provider \(TROVE_GENERATION_PROVIDER\) must be one of extractive, openai/ });
  t.throws(() => resolveConfig({}, { TROVE_EMBEDDING_DIMENSIONS: 'many' }, {}), { message: /^embedding\.dimensions \(TROVE_EMBEDDING_DIMENSIONS\) must be a whole number/ });
  t.throws(() => resolveConfig({}, { TROVE_GENERATION_URL: 'ftp://x' }, {}), { message: /^generation\.url \(TROVE_GENERATION_URL\) must be an http\(s\) URL/ });
  t.throws(() => resolveConfig({}, { TROVE_GENERATION_VISION: 'maybe' }, {}), { message: /^generation\.vision \(TROVE_GENERATION_VISION\) must be true or false/ });
  t.throws(() => resolveConfig({}, { TROVE_VECTOR_MEMORY: 'lots' }, {}), { message: /^vectors\.memory \(TROVE_VECTOR_MEMORY\) 'lots' is not a size/ });
  t.throws(() => resolveConfig({ port: '70000' }, {}, {}), { message: "--port must be an integer from 0 to 65535, got '70000'." });
  t.throws(() => resolveConfig({}, { TROVE_SHUTDOWN_DRAIN_SECONDS: 'soon' }, {}), { message: /--drain-seconds \/ TROVE_SHUTDOWN_DRAIN_SECONDS must be/ });
  t.throws(() => resolveConfig({}, { TROVE_WEBHOOK_RETRY_SCALE: '0' }, {}), { message: /--webhook-retry-scale \/ TROVE_WEBHOOK_RETRY_SCALE must be a positive number/ });
});

t.test('config.json is checked whole, naming the file and the field', async (t) => {
  const cases: [string, string, RegExp][] = [
    ['bad JSON', '{"embedding": ', /config\.json is not valid JSON \(.+\): fix or remove it\.$/],
    ['not an object', '[1, 2]', /config\.json must hold a JSON object\.$/],
    ['an unknown provider', '{"embedding": {"provider": "glove"}}', /config\.json: embedding\.provider must be one of builtin, openai, ollama, transformers \(got "glove"\)\.$/],
    ['a wrong type', '{"generation": {"vision": 42}}', /config\.json: generation\.vision must be true or false/],
    ['a section that is not an object', '{"vectors": "1GB"}', /config\.json: vectors must be an object/],
    ['a bad size', '{"vectors": {"memory": "lots"}}', /config\.json: vectors\.memory \(TROVE_VECTOR_MEMORY\) 'lots' is not a size/],
    ['a relative cache dir', '{"embedding": {"cacheDir": "cache"}}', /config\.json: embedding\.cacheDir must be an absolute path/],
  ];
  for (const [what, text, message] of cases) {
    const dir = dataDirWith(text);
    t.throws(() => readConfigFile(path.join(dir, 'config.json')), { message }, what);
    t.throws(() => loadConfig({ dataDir: dir }, {}), { message: new RegExp('^' + literally(path.join(dir, 'config.json'))) }, `${what}: the message starts with the file`);
  }
  const none = dataDirWith();
  t.same(readConfigFile(path.join(none, 'config.json')), {}, 'no file: every setting takes its default');
  t.same(loadConfig({ ephemeral: true, dataDir: dataDirWith('{"embedding": {"provider": "glove"}}') }, {}).embedding.provider, 'builtin', 'an ephemeral data dir starts empty: no config.json applies');
  const kept = readConfigFile(path.join(dataDirWith('{"note": "by hand", "embedding": {"model": "m", "comment": "kept"}}'), 'config.json'));
  t.match(kept, { note: 'by hand', embedding: { model: 'm', comment: 'kept' } }, 'keys trove does not read are left alone, not refused');
  t.equal(loadConfig({ dataDir: dataDirWith('{"generation": {"provider": "openai"}}') }, { TROVE_GENERATION_MODEL: 'm2' }).generation.model, 'm2', 'loadConfig reads the data dir\'s file under the environment');
});

t.test('config.set and the start read the file by the same keys', async (t) => {
  const fileKeys = Object.entries(ConfigFileSchema.shape).flatMap(([section, schema]) => Object.keys(schema.unwrap().shape).map((key) => `${section}.${key}`));
  t.same(fileKeys.sort(), Object.keys(CONFIG_KEYS).sort());
});

t.test('trove daemon start with a bad config.json: exit 1, the file and the field, no stack trace', async (t) => {
  const dir = dataDirWith('{"embedding": {"provider": "glove"}}');
  const run = await runCli(['daemon', 'start', '--data-dir', dir, '--port', '0']);
  t.equal(run.code, 1);
  t.equal(run.stderr.trim(), `trove: ${path.join(dir, 'config.json')}: embedding.provider must be one of builtin, openai, ollama, transformers (got "glove").`);
  t.notMatch(run.stderr, /\n\s+at /, 'no stack trace');

  const badJson = dataDirWith('{');
  const second = await runCli(['daemon', 'start', '--data-dir', badJson, '--port', '0']);
  t.equal(second.code, 1);
  t.match(second.stderr, new RegExp(`^trove: ${literally(path.join(badJson, 'config.json'))} is not valid JSON`));
  t.notMatch(second.stderr, /\n\s+at /, 'no stack trace');
});
