// One default search mode for the CLI and the TUI: the API's. They send no `mode` unless the user
// chose one, so the API's default applies (retrieval-api.md, search: `semantic`). The contract also
// says the mode's processing flag must be on, so on a keyword-only collection that default is a
// 400; only then, and only when the user chose no mode, the request is repeated as keyword. The
// common case costs one request; the fallback reads the collection rather than the error's wording.
import type { Collection, SearchInput, SearchResponseBody } from '../client/index.js';
import { CliApiError, type ApiClient, type RequestBody } from './client.js';

/** A search body; `mode` and `result_unit` may be a flag's text, for the daemon to check. */
export type SearchBody = RequestBody<SearchInput, 'mode' | 'result_unit'>;

export async function searchWithDefaultMode(api: ApiClient, collectionPath: string, body: SearchBody): Promise<SearchResponseBody> {
  try {
    return await api.request<SearchResponseBody>('POST', `${collectionPath}:search`, body);
  } catch (err) {
    if (body.mode !== undefined || !(err instanceof CliApiError) || err.code !== 'invalid_request') throw err;
    const collection = await api.request<Pick<Collection, 'processing'>>('GET', collectionPath).catch(() => null);
    const processing = collection?.processing;
    if (!processing || processing.semantic !== false || processing.keyword === false) throw err;
    return api.request<SearchResponseBody>('POST', `${collectionPath}:search`, { ...body, mode: 'keyword' });
  }
}
