// The one interface every embedding provider implements (builtin GloVe/SIF, and later
// OpenAI-compatible, Ollama and transformers providers).

export interface EmbeddingProvider {
  /** Model id recorded with a collection's vectors, e.g. 'builtin:glove-sg-100d-sif'. */
  readonly id: string;
  /** Length of every vector embed() returns. */
  readonly dimensions: number;
  /**
   * One vector per input text, in order, each of length `dimensions` and unit-normalised. A text
   * with nothing the model can represent (empty, or only unknown words) yields the all-zero
   * vector: never NaN.
   */
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** What the indexing worker knows about embedding: the model in use, loaded on first need. */
export interface Embedding {
  modelId: string;
  get(): Promise<EmbeddingProvider>;
}
