// Answers from any OpenAI-compatible chat completions server: OpenAI, Ollama, llama.cpp server,
// vLLM, LM Studio. The model sees the sources as numbered evidence and cites `[n]`; the answer
// it writes is mapped to `[[SRC:nnnn]]` markers (the n-th source's key), and citations of
// evidence that does not exist are removed.
import { checkDeadline, GenerationError, type AnswerSource, type GenerateInput, type GeneratedAnswer, type Generator } from './generator.js';
import { collapseRepeats, finishAnswer, formatMarker, replaceCitations, stripMarkers } from './markers.js';

export interface OpenAiGeneratorConfig {
  /**
   * Base URL; requests go to `{baseUrl}/chat/completions`. A bare origin
   * (https://api.openai.com, http://127.0.0.1:11434) gets `/v1` added, as for embeddings.
   */
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  /** Upper bound per request; the input's deadline may cut it shorter. Default 120 s. */
  timeoutMs?: number | undefined;
  fetchImpl?: typeof fetch | undefined;
  /** The model reads images: query images get its description besides what OCR read. */
  vision?: boolean | undefined;
  /** Sampling temperature; null sends none (some reasoning models refuse the field). Default 0.2. */
  temperature?: number | null | undefined;
  /** Characters of evidence per request. Defaults: standard 16,000, ultra and recall 48,000. */
  maxEvidenceChars?: Partial<Record<GenerateInput['mode'], number>> | undefined;
}

const DEFAULT_EVIDENCE_CHARS: Record<GenerateInput['mode'], number> = { standard: 16_000, ultra: 48_000, recall: 48_000 };

const SYSTEM_PROMPT = [
  'You answer questions about a collection of documents, using only the numbered evidence given with the question.',
  'Rules:',
  '- State only what the evidence says. Do not use outside knowledge and do not guess.',
  '- After each sentence, cite the evidence it rests on by number in square brackets, e.g. "Tides follow the Moon [2]." or "… [1][3]."',
  '- Cite only numbers that appear in the evidence, and only evidence that supports the sentence.',
  '- If the evidence does not answer the question, say plainly that the collection holds nothing that answers it, and cite nothing.',
  '- Answer in the language of the question. Do not end with a list of sources.',
].join('\n');

const MODE_HINT: Record<GenerateInput['mode'], string> = {
  standard: 'Answer concisely, in a few sentences.',
  ultra: 'Answer thoroughly: cover every aspect of the question the evidence speaks to.',
  recall: 'Answer thoroughly and bring together everything in the evidence that bears on the question.',
};

function endpoint(baseUrl: string): URL {
  const url = new URL(baseUrl);
  let path = url.pathname.replace(/\/+$/, '');
  if (path === '') path = '/v1';
  url.pathname = `${path}/chat/completions`;
  return url;
}

/** Cuts text to at most `max` characters at a word boundary, with an ellipsis. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()} …`;
}

/** `[n] (path) text` blocks, fitting the budget: each source gets a fair share, unused shares pass on. */
export function evidenceBlocks(sources: AnswerSource[], budget: number): string {
  const blocks: string[] = [];
  let left = budget;
  for (let i = 0; i < sources.length; i++) {
    const src = sources[i]!;
    const share = Math.max(400, Math.floor(left / (sources.length - i)));
    if (left < 200) break;
    const body = src.passages
      .map((p) => {
        const text = stripMarkers(p.text).replace(/[ \t]+/g, ' ').replace(/\n{3,}/g, '\n\n').trim();
        const heading = p.heading?.trim();
        return heading && !text.startsWith(heading) ? `${heading}: ${text}` : text;
      })
      .filter((t) => t !== '')
      .join('\n…\n');
    const head = `[${i + 1}] (${src.path}) `;
    const block = head + clip(body, Math.max(100, Math.min(share, left) - head.length));
    blocks.push(block);
    left -= block.length + 2;
  }
  return blocks.join('\n\n');
}

/**
 * Citations as models write them: `[1]`, `[1, 3]`, `[1-3]`, `[1][3]`, `【1】`, `［1］`, `[^1]`,
 * `[Source 1]`, `[[1]]`. Our own `[[SRC:nnnn]]` markers match too and are kept when known.
 * A Markdown link `[1](…)` is not a citation.
 */
const CITATION =
  /\[\[\s*(SRC:\d+)\s*\]\]|(?:\[\[?|【|［)\s*\^?(?:(?:sources?|src|refs?|references?|evidence|doc(?:ument)?s?)\s*[:#]?\s*)?#?(\d{1,4}(?:\s*(?:[,;，、]|[-–—]|and|&)\s*#?\d{1,4})*)\s*(?:\]\]?|】|］)(?!\()/giu;

function numbersOf(list: string): number[] {
  const out: number[] = [];
  for (const part of list.split(/\s*(?:[,;，、]|and|&)\s*/i)) {
    const range = /^#?(\d+)\s*[-–—]\s*#?(\d+)$/.exec(part.trim());
    if (range) {
      const a = Number(range[1]);
      const b = Number(range[2]);
      if (b >= a && b - a <= 20) for (let n = a; n <= b; n++) out.push(n);
      continue;
    }
    const n = Number(part.replace(/^#/, '').trim());
    if (Number.isInteger(n)) out.push(n);
  }
  return out;
}

/** The model's text with its citations turned into markers for `sources`, unknown ones removed. */
export function mapCitations(text: string, sources: AnswerSource[]): GeneratedAnswer {
  const keys = new Set(sources.map((s) => s.key));
  let body = text.replace(/<think>[\s\S]*?<\/think>/gi, '').replace(/^[\s\S]*?<\/think>/i, '');
  // A trailing "Sources:" list repeats the citations and reads as noise once they are markers.
  body = body.replace(/\n\s*(?:\*\*|#+\s*)?(?:sources|references|citations|evidence)(?:\*\*)?\s*:?\s*(?:\*\*)?\s*\n(?:\s*(?:[-*•]\s*|\d+[.)]\s*)?(?:\[\d+\]|【\d+】).*(?:\n|$))+\s*$/i, '\n');
  const mapped = replaceCitations(body, CITATION, (m) => {
    if (m[1] !== undefined) return keys.has(m[1]) ? formatMarker(m[1]) : '';
    const out: string[] = [];
    for (const n of numbersOf(m[2]!)) {
      const key = sources[n - 1]?.key;
      if (n >= 1 && key !== undefined && !out.includes(key)) out.push(key);
    }
    return out.map(formatMarker).join('');
  });
  return finishAnswer(collapseRepeats(mapped), keys);
}

function redact(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('[redacted]') : text;
}

function excerpt(text: string, secret: string | undefined): string {
  const flat = redact(text, secret).replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

/** History characters sent at most (the most recent turns), and per turn. */
const HISTORY_CHARS = 12_000;
const TURN_CHARS = 4_000;

/**
 * Prior turns as chat messages: the most recent ones within a budget, markers removed (they name
 * other requests' sources), starting with a user turn, and with roles alternating (several chat
 * templates, e.g. Mistral's, refuse two user messages in a row): turns of one role in a row merge.
 * The question that follows is a user message, so a trailing user turn merges into it instead.
 */
export function historyMessages(history: GenerateInput['history']): { role: 'user' | 'assistant'; content: string }[] {
  const kept: { role: 'user' | 'assistant'; content: string }[] = [];
  let used = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const turn = history[i]!;
    const content = clip(stripMarkers(turn.content).trim(), TURN_CHARS);
    if (content === '') continue;
    if (used + content.length > HISTORY_CHARS && kept.length > 0) break;
    used += content.length;
    kept.unshift({ role: turn.role, content });
  }
  while (kept[0]?.role === 'assistant') kept.shift();
  const out: { role: 'user' | 'assistant'; content: string }[] = [];
  for (const turn of kept) {
    const prev = out.at(-1);
    if (prev && prev.role === turn.role) prev.content += `\n\n${turn.content}`;
    else out.push({ ...turn });
  }
  return out;
}

interface ChatCompletion {
  choices?: { message?: { content?: string | null | { type?: string; text?: string }[] }; finish_reason?: string }[];
  error?: { message?: string };
}

export function openAiGenerator(cfg: OpenAiGeneratorConfig): Generator {
  const url = endpoint(cfg.baseUrl);
  const host = url.host;
  const doFetch = cfg.fetchImpl ?? fetch;
  let sendTemperature = cfg.temperature !== null;

  function messages(input: GenerateInput): { role: 'system' | 'user' | 'assistant'; content: string }[] {
    const budget = cfg.maxEvidenceChars?.[input.mode] ?? DEFAULT_EVIDENCE_CHARS[input.mode];
    const evidence = input.sources.length > 0 ? evidenceBlocks(input.sources, budget) : '(no evidence was found)';
    const prior = historyMessages(input.history);
    const earlier = prior.at(-1)?.role === 'user' ? `Earlier question: ${prior.pop()!.content}\n\n` : '';
    return [
      { role: 'system', content: `${SYSTEM_PROMPT}\n${MODE_HINT[input.mode]}` },
      ...prior,
      { role: 'user', content: `${earlier}Evidence:\n\n${evidence}\n\nQuestion: ${input.question.trim()}` },
    ];
  }

  async function post(input: Pick<GenerateInput, 'deadline' | 'signal'>, body: Record<string, unknown>): Promise<{ status: number; ok: boolean; text: string }> {
    checkDeadline(input);
    const controller = new AbortController();
    const untilDeadline = input.deadline - Date.now();
    const timeoutMs = cfg.timeoutMs ?? 120_000;
    const budget = Math.min(untilDeadline, timeoutMs);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error('deadline'));
    }, Math.max(0, budget));
    const onAbort = () => controller.abort(input.signal?.reason);
    input.signal?.addEventListener('abort', onAbort, { once: true });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (cfg.apiKey) headers.authorization = `Bearer ${cfg.apiKey}`;
    try {
      const res = await doFetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal });
      const text = await res.text();
      return { status: res.status, ok: res.ok, text };
    } catch (err) {
      if (timedOut) {
        const seconds = Math.round(budget / 100) / 10;
        if (untilDeadline <= timeoutMs) throw new GenerationError('deadline_exceeded', `The generation server at ${host} did not answer before the deadline (${seconds} s); the request was aborted.`, true, undefined, { cause: err });
        throw new GenerationError('upstream_error', `The generation server at ${host} did not answer within its timeout (${seconds} s); the request was aborted.`, true, undefined, { cause: err });
      }
      if (input.signal?.aborted) throw new GenerationError('aborted', 'The answer was canceled; the request to the generation server was aborted.', false, undefined, { cause: err });
      const detail = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      throw new GenerationError('unreachable', `The generation server at ${host} could not be reached: ${excerpt(detail, cfg.apiKey)}`, true, undefined, { cause: err });
    } finally {
      clearTimeout(timer);
      input.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** The text of a completion, or a GenerationError saying what came back instead. */
  function completionText(res: { status: number; ok: boolean; text: string }): string {
    if (!res.ok) {
      const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
      throw new GenerationError('upstream_error', `The generation server at ${host} answered ${res.status}: ${excerpt(res.text, cfg.apiKey)}`, retryable, res.status);
    }
    let json: ChatCompletion;
    try {
      json = JSON.parse(res.text) as ChatCompletion;
    } catch {
      throw new GenerationError('bad_response', `The generation server at ${host} answered with something that is not JSON: ${excerpt(res.text, cfg.apiKey)}`, true, res.status);
    }
    const content = json.choices?.[0]?.message?.content;
    const text = Array.isArray(content) ? content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('') : content;
    if (typeof text !== 'string' || text.trim() === '') {
      const why = json.error?.message ? `: ${excerpt(json.error.message, cfg.apiKey)}` : '';
      throw new GenerationError('bad_response', `The generation server at ${host} returned no answer text${why}.`, true, res.status);
    }
    return text;
  }

  const describeImage = cfg.vision
    ? async (image: { data: string; media_type: string }, deadline: number): Promise<string> => {
        // The OpenAI vision message shape, which Ollama, vLLM and LM Studio accept too.
        const body = {
          model: cfg.model,
          stream: false,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Describe this image in two or three sentences for a search engine: what it shows, and any text it contains.' },
                { type: 'image_url', image_url: { url: `data:${image.media_type};base64,${image.data}` } },
              ],
            },
          ],
        };
        return completionText(await post({ deadline }, body)).trim();
      }
    : undefined;

  return {
    provider: 'openai',
    model: cfg.model,
    ...(describeImage ? { describeImage } : {}),
    async generate(input: GenerateInput): Promise<GeneratedAnswer> {
      checkDeadline(input);
      const body: Record<string, unknown> = { model: cfg.model, messages: messages(input), stream: false };
      if (sendTemperature) body.temperature = cfg.temperature ?? 0.2;
      let res = await post(input, body);
      // Some models (OpenAI's reasoning models) refuse any temperature but the default: retry without.
      if (res.status === 400 && 'temperature' in body && /temperature/i.test(res.text)) {
        sendTemperature = false;
        delete body.temperature;
        res = await post(input, body);
      }
      return mapCitations(completionText(res), input.sources);
    },
  };
}
