// Libraries loaded on first use rather than at start-up (issue 15: start-up loads only what the first
// request needs; pdf.js, OCR, the office and parser libraries cost tens to hundreds of ms each).
import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/** An ES module imported on the first call and kept. A failed import is forgotten, so the next call tries again. */
export function lazyImport<M>(load: () => Promise<M>): () => Promise<M> {
  let loading: Promise<M> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}

/** A CommonJS package required on the first call and kept: for callers that are synchronous. */
export function lazyRequire<M>(id: string): () => M {
  let loaded: M | undefined;
  return () => (loaded ??= requireHere(id) as M);
}
