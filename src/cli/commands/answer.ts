// `trove answer [collection] <question>`: one POST :answer, printed as the answer and its sources,
// or as the raw response with --json.
import type { AnswerInput, AnswerResponseBody } from '../../client/index.js';
import { readCliConfig } from '../cli-config.js';
import { ApiClient, collectionPath, reportError, type RequestBody } from '../client.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { stdoutColour } from '../colour.js';
import { resolveTarget, splitQueryArgs } from '../defaults.js';
import { snippetLine } from '../snippet.js';
import { out } from '../io.js';
import { formatLocation, parseFilter } from './search.js';

export interface AnswerOptions {
  namespace?: string;
  collection?: string;
  mode?: string;
  filter?: string;
  principal?: string[];
  json?: boolean;
}

const ANSWER_USAGE = 'trove answer "<question>" (after `trove init`), or trove answer <collection> "<question>"';

export async function runAnswer(first: string | undefined, second: string | undefined, globalOpts: GlobalOptions, opts: AnswerOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const args = splitQueryArgs(first, second, 'question', ANSWER_USAGE);
    const target = resolveTarget({ collection: args.collection, namespaceFlag: opts.namespace, collectionFlag: opts.collection }, await readCliConfig(), ANSWER_USAGE);
    const body: RequestBody<AnswerInput, 'mode'> = { query: args.query, mode: opts.mode ?? 'standard' };
    if (opts.filter !== undefined) body.filter = parseFilter(opts.filter);
    if (opts.principal !== undefined) body.principals = opts.principal;
    const response = await ApiClient.of(await resolveConnection(globalOpts)).request<AnswerResponseBody>('POST', `${collectionPath(target.namespace, target.collection)}:answer`, body);
    out().write(json ? JSON.stringify(response) + '\n' : formatAnswer(response, args.query, stdoutColour()));
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

/** The answer, then the cited sources with the evidence each one gave (the question's words marked when `colour`). */
export function formatAnswer(response: Pick<AnswerResponseBody, 'answer' | 'sources'>, question = '', colour = false): string {
  const lines = [response.answer, ''];
  const cited = Object.entries(response.sources ?? {}).filter(([, s]) => s.is_cited);
  if (cited.length > 0) lines.push('Sources:');
  for (const [key, source] of cited) {
    lines.push(`  [${key}] ${source.path}`);
    const first = source.evidence[0];
    if (first) lines.push(`      ${formatLocation(first)}  ${snippetLine(first.text, question, colour)}`);
  }
  return lines.join('\n').trimEnd() + '\n';
}
