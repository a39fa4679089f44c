// `trove answer <collection> <question>`: one POST :answer, printed as the answer and its sources,
// or as the raw response with --json.
import { ApiClient, collectionPath, reportError } from '../client.js';
import { resolveConnection, type GlobalOptions } from '../connection.js';
import { stdoutColour } from '../colour.js';
import { snippetLine } from '../snippet.js';
import { formatLocation, parseFilter, parseTarget } from './search.js';

export interface AnswerOptions {
  namespace?: string;
  mode?: string;
  filter?: string;
  principal?: string[];
  json?: boolean;
}

interface AnswerResponse {
  answer: string;
  sources?: Record<string, { path: string; is_cited: boolean; evidence: { kind: string; text: string; location?: unknown }[] }>;
}

export async function runAnswer(collection: string, question: string, globalOpts: GlobalOptions, opts: AnswerOptions): Promise<number> {
  const json = Boolean(opts.json);
  try {
    const target = parseTarget(collection, opts.namespace);
    const body: Record<string, unknown> = { query: question, mode: opts.mode ?? 'standard' };
    if (opts.filter !== undefined) body.filter = parseFilter(opts.filter);
    if (opts.principal !== undefined) body.principals = opts.principal;
    const { url, key } = await resolveConnection(globalOpts);
    const response = await new ApiClient(url, key).request<AnswerResponse>('POST', `${collectionPath(target.namespace, target.collection)}:answer`, body);
    process.stdout.write(json ? JSON.stringify(response) + '\n' : formatAnswer(response, question, stdoutColour()));
    return 0;
  } catch (err) {
    return reportError(err, json);
  }
}

/** The answer, then the cited sources with the evidence each one gave (the question's words marked when `colour`). */
export function formatAnswer(response: AnswerResponse, question = '', colour = false): string {
  const lines = [response.answer, ''];
  const cited = Object.entries(response.sources ?? {}).filter(([, s]) => s.is_cited);
  if (cited.length > 0) lines.push('Sources:');
  for (const [key, source] of cited) {
    lines.push(`  [${key}] ${source.path}`);
    const first = source.evidence[0];
    if (first) lines.push(`      ${formatLocation(first as Parameters<typeof formatLocation>[0])}  ${snippetLine(first.text, question, colour)}`);
  }
  return lines.join('\n').trimEnd() + '\n';
}
