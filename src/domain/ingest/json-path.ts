// JSON paths of extracted JSON values (evidence `location.json_path`, retrieval-api.md "JsonPath"):
// JSONPath (RFC 9535) singular queries, written as its normalized paths are except that keys
// that are identifiers use the dot shorthand: `$.inventory.warehouses[1].note`, `$['a b']`.

/** Keys written with the dot shorthand (RFC 9535 member-name-shorthand, ASCII only). */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** RFC 9535 §2.7 (normalized paths): these escapes, and \u00xx for other control characters. */
const ESCAPES: Record<string, string> = { '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', "'": "\\'", '\\': '\\\\' };

/** The step selecting `key` of an object: `.key`, or `['key']` when it is not an identifier. */
export function jsonPathMember(key: string): string {
  if (IDENTIFIER.test(key)) return `.${key}`;
  const quoted = key.replace(/[\u0000-\u001f'\\]/g, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `['${quoted}']`;
}

const JSON_PATH_STEP = /\.[^.[]+|\['(?:[^'\\]|\\.)*'\]|\[\d+\]/g;

/** The steps of a path after `$`: `$.a['b c'][2]` gives `.a`, `['b c']`, `[2]`. */
export function jsonPathSteps(path: string): string[] {
  return path.slice(1).match(JSON_PATH_STEP) ?? [];
}

/** The deepest path both paths lie under: `$.a.b` and `$.a.c` give `$.a`. */
export function commonJsonPath(a: string, b: string): string {
  const stepsA = jsonPathSteps(a);
  const stepsB = jsonPathSteps(b);
  let i = 0;
  while (i < stepsA.length && i < stepsB.length && stepsA[i] === stepsB[i]) i++;
  return '$' + stepsA.slice(0, i).join('');
}

/** Whether `path` is `ancestor` or lies under it. */
export function isWithinJsonPath(path: string, ancestor: string): boolean {
  if (!path.startsWith(ancestor)) return false;
  const next = path[ancestor.length];
  return next === undefined || next === '.' || next === '[';
}

/**
 * A passage's value spans as stored with its location: each path relative to the passage's own
 * `json_path` (their common ancestor), which keeps a passage of a deep array from storing the
 * same long prefix hundreds of times. absoluteSpans reverses it.
 */
export function relativeSpans<S extends readonly [number, number, string]>(spans: readonly S[], base: string): [number, number, string][] {
  return spans.map(([start, end, path]) => [start, end, path.startsWith(base) ? path.slice(base.length) : path]);
}

export function absoluteSpans(spans: readonly (readonly [number, number, string])[], base: string): [number, number, string][] {
  return spans.map(([start, end, path]) => [start, end, path.startsWith('$') ? path : base + path]);
}
