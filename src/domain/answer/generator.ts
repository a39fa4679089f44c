// Answer generators (retrieval-api.md: POST ...:answer, Research run; decisions.md §7 synthesize).
// A generator turns a question and the sources retrieval found for it into an answer whose
// sentences carry `[[SRC:nnnn]]` markers; the caller fixes the keys, the generator only cites them.
// Two kinds: `extractive` (offline, no language model, the default) and `openai` (any
// OpenAI-compatible chat completions server).
import { stripMarkers } from './markers.js';

export interface AnswerPassage {
  text: string;
  heading: string;
}

export interface AnswerSource {
  /** The key of the sources map, e.g. 'SRC:0001'; markers are `[[SRC:0001]]`. */
  key: string;
  fileId: string;
  path: string;
  /** A ranking value (higher is better), not a confidence. */
  score: number;
  passages: AnswerPassage[];
}

export type HistoryTurn = { role: 'user' | 'assistant'; content: string };

export interface GenerateInput {
  question: string;
  /** Oldest first; the service stores no conversation. */
  history: HistoryTurn[];
  /** Best first. */
  sources: AnswerSource[];
  mode: 'standard' | 'ultra' | 'recall';
  /** Epoch milliseconds; past it the generator gives up with a `deadline_exceeded` GenerationError. */
  deadline: number;
  signal?: AbortSignal;
}

export interface GeneratedAnswer {
  /** Text with `[[SRC:nnnn]]` markers. */
  answer: string;
  /** Keys cited, in first-cited order; exactly the markers present in `answer`. */
  cited: string[];
  /** Set when the generator found nothing in the sources to answer with (the answer then declines). */
  declined?: true;
}

export interface Generator {
  provider: string;
  model: string;
  generate(input: GenerateInput): Promise<GeneratedAnswer>;
  /** Present when the model reads images (a vision-capable chat model): a short description of a query image. */
  describeImage?(image: { data: string; media_type: string }, deadline: number): Promise<string>;
}

export type GenerationErrorCode =
  /** The deadline passed before an answer was ready. */
  | 'deadline_exceeded'
  /** The caller's signal aborted the generation (e.g. a canceled research run). */
  | 'aborted'
  /** The generation server could not be reached. */
  | 'unreachable'
  /** The generation server answered with a non-2xx status. */
  | 'upstream_error'
  /** The generation server answered 2xx with something that is not a usable completion. */
  | 'bad_response';

/** Every failure of a generator; `code`/`retryable` are for logic, `message` for people. */
export class GenerationError extends Error {
  override readonly name = 'GenerationError';
  constructor(
    readonly code: GenerationErrorCode,
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Throws when the input's signal has aborted or its deadline has passed. */
export function checkDeadline(input: Pick<GenerateInput, 'deadline' | 'signal'>): void {
  if (input.signal?.aborted) throw new GenerationError('aborted', 'The answer was canceled.', false, undefined, { cause: input.signal.reason });
  if (Date.now() >= input.deadline) throw new GenerationError('deadline_exceeded', 'The answer was not ready before its deadline.', true);
}

// ---------------------------------------------------------------------------------------------
// Follow-up questions

const PRONOUNS = new Set(
  'it its it\'s itself they them their theirs themselves this that these those he him his she her hers one ones there such same former latter'.split(' '),
);
/** Words a follow-up commonly starts with when it leans on the previous turn. */
const FOLLOW_UP_OPENERS = [/^(and|but|also|so|then|or)\b/, /^(what|how)\s+about\b/, /^(what|how)\s+else\b/, /^why\s+(not|so)\b/, /^(and\s+)?(same|more)\b/, /^(tell me )?more\b/];
/** Words that are never the subject of a question: question words, function words, vague verbs. */
const NON_SALIENT = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between both but by
  can could did do does doing done down during each else even ever every few for from further get gets got had has have having he her here
  hers herself him himself his how i if in into is it its itself just let like ll me mean means more most much my myself need no nor not now of off
  on once only or other our ours ourselves out over own please quite rather really same say says she should so some such tell than that the their
  theirs them themselves then there these they thing things this those through to too under until up us use used very want was way we well were
  what whats when where which while who whom whose why will with would yes you your yours yourself yourselves explain describe know give show
  think find made make makes many one ones re s t ve d m isn don doesn didn aren wasn weren won wouldn shouldn couldn`.split(/\s+/),
);
/** Common verbs, adjectives and adverbs: a cheap stand-in for "not a noun". */
const NOT_NOUNS = new Set(
  `long short big small large little good bad best better worse worst new old high low typical typically usually always never sometimes often
  first last next different real true false important possible able likely main best live lives living lived work works working worked happen
  happens happened cause causes caused need needs take takes come comes go goes going look looks seem seems keep keeps start starts stop stops
  help helps try tries compare compared affect affects change changes get become becomes call called happen produce produces` .split(/\s+/),
);

function words(text: string): string[] {
  return stripMarkers(text).normalize('NFKC').toLowerCase().match(/[\p{L}\p{M}\p{N}]+(?:['’][\p{L}]+)*/gu) ?? [];
}

/** Content words of a text, in order of first appearance, without repeats. */
function salientWords(text: string): string[] {
  const out: string[] = [];
  for (const raw of words(text)) {
    const w = raw.replace(/['’]s$/, '').replace(/['’]/g, '');
    if (w.length < 2 || NON_SALIENT.has(w) || NOT_NOUNS.has(w) || PRONOUNS.has(w) || /^\d{1,2}$/.test(w)) continue;
    if (!out.includes(w)) out.push(w);
  }
  return out;
}

/**
 * The retrieval query for a question asked after `history`. Self-contained questions pass through
 * unchanged; a short question, or one that leans on the previous turn (starts with a pronoun,
 * "and", "what about", ...), gets the salient words of the last user turn(s) appended, so that
 * "what about their diet?" after "how long do cats live?" searches for "… cats live".
 */
export function followUpQuery(question: string, history: GenerateInput['history']): string {
  const q = question.trim();
  const userTurns = history.filter((h) => h.role === 'user' && h.content.trim() !== '');
  if (userTurns.length === 0) return q;
  const qWords = words(q);
  const qSalient = salientWords(q);
  const first = qWords[0] ?? '';
  const lower = q.normalize('NFKC').toLowerCase();
  const leansBack =
    qSalient.length <= 2 ||
    qWords.length <= 4 ||
    PRONOUNS.has(first) ||
    FOLLOW_UP_OPENERS.some((re) => re.test(lower)) ||
    // "How long do they live?": a pronoun among the first few words.
    qWords.slice(0, 4).some((w) => PRONOUNS.has(w) && w !== 'one' && w !== 'there');
  if (!leansBack) return q;
  const have = new Set(qSalient);
  const extra: string[] = [];
  // The most recent user turn first; earlier ones only while too little context was found
  // (the last turn may itself have been a follow-up).
  for (let i = userTurns.length - 1; i >= 0 && extra.length < 3; i--) {
    for (const w of salientWords(userTurns[i]!.content)) {
      if (have.has(w)) continue;
      have.add(w);
      extra.push(w);
      if (extra.length >= 8) break;
    }
  }
  return extra.length === 0 ? q : `${q} ${extra.join(' ')}`;
}
