// retrieval-api.md, Limits.
export const DEFAULT_BODY_LIMIT = 1_048_576;
export const SEARCH_BODY_LIMIT = 4_194_304;
export const ANSWER_BODY_LIMIT = 6_291_456;
