// Embedding servers: any OpenAI-compatible /v1/embeddings (OpenAI, llama.cpp server, vLLM,
// LM Studio, Ollama's compatibility route) and Ollama's native /api/embed.
import type { EmbeddingProvider } from './provider.js';

export interface RemoteEmbeddingOptions {
  kind: 'openai' | 'ollama';
  /** Base URL, e.g. https://api.openai.com or http://127.0.0.1:11434 */
  url: string;
  model: string;
  apiKey?: string | undefined;
  /** Known in advance from the config; otherwise learnt from the first answer. */
  dimensions?: number | undefined;
  timeoutMs?: number;
  /** Texts per request. */
  batchSize?: number;
}

function normalise(v: number[]): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  const out = new Float32Array(v.length);
  if (norm > 0) for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

export class RemoteEmbedder implements EmbeddingProvider {
  readonly id: string;
  dimensions: number;

  constructor(private readonly opts: RemoteEmbeddingOptions) {
    this.id = `${opts.kind}:${opts.model}`;
    this.dimensions = opts.dimensions ?? 0;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    const size = this.opts.batchSize ?? 64;
    for (let i = 0; i < texts.length; i += size) out.push(...(await this.request(texts.slice(i, i + size))));
    return out;
  }

  private async request(batch: string[]): Promise<Float32Array[]> {
    const base = this.opts.url.replace(/\/+$/, '');
    const url = this.opts.kind === 'openai' ? `${base}${base.endsWith('/v1') ? '' : '/v1'}/embeddings` : `${base}/api/embed`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    // An empty string is an error for several servers; a space embeds as (nearly) nothing.
    const input = batch.map((t) => (t.trim() === '' ? ' ' : t));
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: this.opts.model, input }),
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 60_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`The embedding server at ${new URL(url).host} answered ${res.status}: ${text.slice(0, 200)}`);
    const json = JSON.parse(text) as { data?: { embedding: number[]; index?: number }[]; embeddings?: number[][] };
    const vectors = this.opts.kind === 'openai' ? [...(json.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding) : (json.embeddings ?? []);
    if (vectors.length !== batch.length) throw new Error(`The embedding server returned ${vectors.length} vectors for ${batch.length} texts.`);
    const dims = vectors[0]?.length ?? 0;
    if (this.dimensions === 0) this.dimensions = dims;
    if (vectors.some((v) => v.length !== this.dimensions)) throw new Error(`The embedding server returned vectors of ${dims} dimensions; ${this.dimensions} were expected.`);
    return vectors.map(normalise);
  }
}
