// Whether the evidence retrieval found supports a question at all (docs/decisions.md, Answers;
// docs/ranking.md, "Declining a question"). Retrieval always returns its best files, so a question
// the collection cannot answer still gets loosely related passages; quoting them answers what the
// collection does not say. Support is measured on the question's informative words, weighted by
// how rare each is among the passages the reader may read (the collection's statistics, not the
// retrieved handful, in which the words retrieval matched are common by construction):
//
//   idf(t)     = ln(1 + (N − n_t + 0.5) / (n_t + 0.5))       (Lucene's; N passages, n_t holding t)
//   coverage   = max over two adjacent sentences of a passage of Σ_{t∈Q∩window} w_t·idf(t) / Σ_{t∈Q} w_t·idf(t)
//   matched    = max over passages of Σ_{t∈Q∩passage} w_t·idf(t) / ln(1 + (N + 0.5) / 0.5)
//
// w is 1 for the question's own words and 0.5 for words a follow-up borrows from history (the
// answer passes the question as retrieval read it, history and a query image's reading included).
// `matched` counts the informative words one passage holds in units of a word the collection
// has never seen (the largest idf), so it reads the same on collections of any size; it keeps a
// long, many-part question (a third of its words in one place is already a lot) from being
// declined. A question is supported when coverage ≥ MIN_COVERAGE or matched ≥ MIN_MATCHED.
import { followUpQuery, type AnswerSource, type HistoryTurn } from './generator.js';
import { questionText, sentenceSpans, termsOf, termWords } from './extractive.js';

/**
 * Calibrated through beir.mjs on the three dev sets' answerable questions (SciFact, Cranfield,
 * CISI) against fixtures/answers/unanswerable.jsonl on SciFact (docs/ranking.md, "Declining a
 * question"): the highest round values at which no dev set answers fewer of its first 100
 * questions than before. 0.35 already declined 9 of the 20 but answered SciFact's 100 at 0.95
 * (0.96 before), 0.4 / 1.5 declined 14 at 0.91: words alone do not tell a question the collection
 * cannot answer from a claim worded unlike its abstract, so the threshold stays conservative.
 */
export const MIN_COVERAGE = 0.3;
export const MIN_MATCHED = 1.2;
/** Question words weighed at most (a 32,000-character question would count thousands). */
const MAX_TERMS = 64;

export interface QuestionTerms {
  /** Term → weight (1 own, 0.5 borrowed from history). */
  weights: Map<string, number>;
  /** Term → the word the keyword index is asked about. */
  words: Map<string, string>;
}

/** The informative terms of a question (as the extractive generator reads it), at most MAX_TERMS. */
export function questionTerms(question: string, history: HistoryTurn[]): QuestionTerms {
  const weights = new Map<string, number>();
  const words = new Map<string, string>();
  for (const [term, word] of termWords(questionText(question))) {
    if (weights.size >= MAX_TERMS) break;
    weights.set(term, 1);
    words.set(term, word);
  }
  const expanded = followUpQuery(question, history);
  if (expanded !== question.trim()) {
    const borrowed = weights.size === 0 ? 1 : 0.5;
    for (const [term, word] of termWords(expanded.slice(question.trim().length))) {
      if (weights.size >= MAX_TERMS) break;
      if (weights.has(term)) continue;
      weights.set(term, borrowed);
      words.set(term, word);
    }
  }
  return { weights, words };
}

/** The reader's passage statistics for a question's terms. */
export interface TermStatistics {
  passages: number;
  /** Term → passages holding it. */
  frequencies: Map<string, number>;
}

export interface Support {
  coverage: number;
  matched: number;
  supported: boolean;
}

export function questionSupport(terms: QuestionTerms, sources: AnswerSource[], stats: TermStatistics): Support {
  const n = Math.max(stats.passages, 1);
  const idf = (term: string) => {
    const df = Math.min(stats.frequencies.get(term) ?? 0, n);
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  };
  const weighted = [...terms.weights].map(([t, w]) => [t, w * idf(t)] as const);
  const total = weighted.reduce((sum, [, v]) => sum + v, 0);
  // Nothing to weigh (a question of stopwords only): the generator decides alone.
  if (total <= 0) return { coverage: 1, matched: Infinity, supported: true };
  const mass = (held: (term: string) => boolean) => weighted.reduce((sum, [t, v]) => (held(t) ? sum + v : sum), 0);
  let coverage = 0;
  let matched = 0;
  for (const source of sources) {
    for (const passage of source.passages) {
      const text = passage.text ?? '';
      const sentences = sentenceSpans(text).map((span) => new Set(termsOf(text.slice(span.start, span.end))));
      const whole = new Set(sentences.flatMap((s) => [...s]));
      matched = Math.max(matched, mass((t) => whole.has(t)));
      for (let i = 0; i < sentences.length; i++) {
        const here = sentences[i]!;
        const next = sentences[i + 1];
        coverage = Math.max(coverage, mass((t) => here.has(t) || (next?.has(t) ?? false)) / total);
      }
    }
  }
  matched /= Math.log(1 + (n + 0.5) / 0.5);
  return { coverage, matched, supported: coverage >= MIN_COVERAGE || matched >= MIN_MATCHED };
}
