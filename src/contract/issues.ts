// zod's issues as sentences a person can act on: the one place where validator wording becomes the
// message of an `invalid_request` error (retrieval-api.md "Errors": the message is for people, the
// code for programs), so the API, the operator socket, config and seed files all read alike:
//
//   limit must be an integer from 1 to 100 (got 500).
//   mode must be one of keyword, semantic (got "fuzzy").
//   query is required.
//   Unknown field "colour" in the request body.
//
// A sentence names the field (nested fields as `filter.value`, array items as `principals[2]`),
// says what is allowed and, when it is safe to show, what was received: short scalars only, never a
// long string, an object or a field whose name says it holds a secret.
import type { z } from 'zod';

export type IssuePath = readonly PropertyKey[];

/** The zod 4 issue, loosely: the fields each kind carries are read defensively. */
type Issue = z.core.$ZodIssue;

export interface DescribeOptions {
  /** The schema that was parsed: lets a sentence give the whole range ("from 1 to 100") rather than the side that failed. */
  schema?: z.ZodType;
  /** The value that was parsed: lets a sentence say what was received. */
  input?: unknown;
  /** What the empty path is called, e.g. "the request body" (default "the value"). */
  root?: string;
  /** Names the field at the empty path; takes the place of `root` in sentences about the value itself (a config key, a flag). */
  field?: string;
}

export interface DescribedIssue {
  /** The zod path, e.g. ['principals', 2]. */
  path: PropertyKey[];
  /** One sentence, ending with a full stop. */
  message: string;
}

/** `filter.value`, `principals[2]`, `sort[0].field`; '' for the empty path. */
export function formatPath(path: IssuePath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      out += /^[A-Za-z_$][\w$-]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** Every issue of a failed parse as a sentence (invalid_union issues become the sentence of the branch that fits best). */
export function describeIssues(issues: readonly Issue[], options: DescribeOptions = {}): DescribedIssue[] {
  return issues.map((issue) => ({ path: [...issue.path], message: describeIssue(issue, options) }));
}

/** The message of an error for a failed parse: its first sentence, and how many more problems there are. */
export function issuesSentence(issues: readonly Issue[], options: DescribeOptions = {}): string {
  return describedSentence(describeIssues(issues, options), options);
}

/** `issuesSentence` for issues already described (a caller that also lists them all). */
export function describedSentence(described: readonly DescribedIssue[], options: DescribeOptions = {}): string {
  if (described.length === 0) return `${capitalize(options.field ?? options.root ?? 'the value')} is invalid.`;
  // One problem can fail two checks that read the same ("limit must be an integer from 1 to 100"
  // for 2^53 + 1, both too big and not a safe integer): each sentence is said once.
  const distinct = [...new Set(described.map((d) => d.message))];
  const shown = distinct.slice(0, 3);
  const more = distinct.length - shown.length;
  return shown.join(' ') + (more > 0 ? ` (${more} more problem${more === 1 ? '' : 's'}.)` : '');
}

export function describeIssue(issue: Issue, options: DescribeOptions = {}): string {
  const text = describeAt(issue, [...issue.path], options);
  // A sentence about the whole value starts with "the request body …": a capital, as any sentence.
  return sentence(issue.path.length === 0 && !options.field ? capitalize(text) : text);
}

function describeAt(issue: Issue, path: PropertyKey[], options: DescribeOptions): string {
  const name = fieldName(path, options);
  const value = valueAt(options.input, path);
  const fieldSchema = options.schema ? schemaAt(options.schema, path) : undefined;
  const got = receivedSuffix(value, path, options);

  // A schema that words its own rule (`.regex(re, 'must be …')`, `{ error: '…' }`) keeps it: its author knew the field best.
  if (issue.code !== 'custom' && issue.code !== 'unrecognized_keys' && issue.code !== 'invalid_union' && !isZodWording(issue.message)) {
    if (issue.code === 'invalid_type' && value === undefined && options.input !== undefined) return `${name} is required`;
    const suffix = issue.code === 'too_big' || issue.code === 'too_small' ? sizeGot(issue, value, path, options) : got;
    return withField(issue.message, name, path, options) + (/\(got\b/.test(issue.message) ? '' : suffix);
  }

  switch (issue.code) {
    case 'invalid_type': {
      if (value === undefined && (options.input !== undefined || / received undefined$/.test(issue.message))) {
        return path.length === 0 && !options.field ? `${capitalize(name)} is missing` : `${name} is required`;
      }
      const expected = issue.expected === 'int' || (issue as { format?: string }).format === 'safeint' ? numberRange(fieldSchema, true) : expectedType(String(issue.expected), fieldSchema);
      const received = options.input === undefined ? receivedFromMessage(issue.message) : describeType(value, !secretField(path, options));
      return `${name} must be ${expected}${received ? ` (got ${received})` : ''}`;
    }
    case 'too_big':
    case 'too_small':
      return `${name} ${sizeRule(issue, fieldSchema)}${sizeGot(issue, value, path, options)}`;
    case 'invalid_value': {
      const values = issue.values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? String(v)));
      if (values.length === 1) return `${name} must be ${JSON.stringify(issue.values[0]) ?? values[0]}${got}`;
      return `${name} must be one of ${values.join(', ')}${got}`;
    }
    case 'unrecognized_keys': {
      const keys = issue.keys.map((k) => JSON.stringify(k));
      const where = path.length === 0 ? (options.field ?? options.root ?? 'the value') : formatPath(path);
      return `Unknown field${keys.length === 1 ? '' : 's'} ${keys.join(', ')} in ${where}`;
    }
    case 'invalid_format':
      return `${name} ${formatRule(issue)}${got}`;
    case 'not_multiple_of':
      return `${name} must be a multiple of ${String(issue.divisor)}${got}`;
    case 'invalid_union':
      return describeUnion(issue, path, options, name, got);
    case 'invalid_key': {
      // A record's key: the path ends with the key itself.
      const key = path.at(-1);
      const owner = fieldName(path.slice(0, -1), options);
      const why = issue.issues[0] ? stripStop(describeAt(issue.issues[0], [], { field: 'the key' })) : 'the key is not allowed';
      return `${owner} has a key ${JSON.stringify(String(key))} that is not allowed: ${why}`;
    }
    case 'invalid_element': {
      const why = issue.issues[0] ? stripStop(describeAt(issue.issues[0], [], { field: 'each item' })) : 'an item is not allowed';
      return `${name} has an item that is not allowed: ${why}`;
    }
    case 'custom':
      return withField(issue.message, name, path, options);
    default:
      return withField((issue as { message: string }).message, name, path, options);
  }
}

// ---------------------------------------------------------------------------------------------
// Pieces of sentences

/** A message that reads on after a field's name: "must be …", "is …", "has …". */
const READS_ON = /^(must|is|are|cannot|can|should|has|have|needs|takes)\b/;

/** zod's own (English) wording, as opposed to a message a schema gave. */
function isZodWording(message: string): boolean {
  return /^(Invalid (input|option|string|number|key|value|discriminator)\b|Invalid [A-Za-z0-9 ]+$|Too (big|small): |Unrecognized keys?: )/.test(message);
}

function fieldName(path: PropertyKey[], options: DescribeOptions): string {
  if (path.length === 0) return options.field ?? options.root ?? 'the value';
  const inner = formatPath(path);
  return options.field ? `${options.field}.${inner}`.replace('.[', '[') : inner;
}

/** A refinement keeps its own message; the field is put in front unless the message already names it. */
function withField(message: string, name: string, path: PropertyKey[], options: DescribeOptions): string {
  const text = message.trim();
  if (path.length === 0 && !options.field) return capitalize(text);
  const last = path.length ? String(path.at(-1)) : name;
  const lower = text.toLowerCase();
  if (lower.startsWith(`${name.toLowerCase()} `) || lower.startsWith(`${name.toLowerCase()}:`)) return text;
  // "path must start with /" at files[0].path: the whole name in place of the last part (but
  // "namespace 'x' is not declared" at collections[2].namespace speaks of a namespace, not the field).
  if (name !== last && lower.startsWith(`${last.toLowerCase()} `) && READS_ON.test(text.slice(last.length + 1))) return `${name}${text.slice(last.length)}`;
  // "must be ok" reads on after the name; anything else ("Send a, b or both") follows a colon.
  if (READS_ON.test(text)) return `${name} ${text}`;
  return `${name}: ${text}`;
}

/** A field that may hold a secret, by its name: `secret`, `signingSecret`, `api_key`, `access_token` (not `chunk_tokens`). */
const SECRET_NAME = /(^|[_-]|[a-z](?=[A-Z]))(secrets?|password|passwd|token|credentials?|authorization)$|secret|api[_-]?key|private[_-]?key/i;
const MAX_SHOWN_CHARS = 40;
/** A string holding one of these is never echoed: it could rewrite the terminal or the log line it lands in. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** A value fit to echo back: a short scalar, outside any field that may hold a secret. */
function showable(value: unknown, path: PropertyKey[], options: DescribeOptions): string | undefined {
  if (secretField(path, options)) return undefined;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  if (typeof value === 'string') {
    if (value.length > MAX_SHOWN_CHARS || CONTROL_CHARACTER.test(value)) return undefined;
    return JSON.stringify(value);
  }
  return undefined;
}

function secretField(path: PropertyKey[], options: DescribeOptions): boolean {
  return [...path.map(String), options.field ?? ''].some((n) => SECRET_NAME.test(n));
}

function receivedSuffix(value: unknown, path: PropertyKey[], options: DescribeOptions): string {
  const shown = showable(value, path, options);
  if (shown !== undefined) return ` (got ${shown})`;
  if (value === undefined) return '';
  const kind = describeType(value, !secretField(path, options));
  return kind ? ` (got ${kind})` : '';
}

/** What a value is, for "got …": the value itself when short and safe, else its kind. */
function describeType(value: unknown, reveal = true): string {
  if (value === undefined) return '';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return reveal && value.length <= MAX_SHOWN_CHARS && !CONTROL_CHARACTER.test(value) ? `the string ${JSON.stringify(value)}` : 'a string';
  if (typeof value === 'number') return reveal && Number.isFinite(value) ? String(value) : 'a number';
  if (typeof value === 'boolean') return reveal ? String(value) : 'a boolean';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** Without the input (the issue alone), zod's own message still says what it received. */
function receivedFromMessage(message: string): string {
  const kind = / received (\w+)$/.exec(message)?.[1];
  if (!kind || kind === 'undefined') return '';
  return kind === 'null' ? 'null' : `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
}

function expectedType(expected: string, fieldSchema: z.ZodType | undefined): string {
  switch (expected) {
    case 'number':
      return numberRange(fieldSchema, false);
    case 'string':
      return 'a string';
    case 'boolean':
      return 'true or false';
    case 'object':
      return 'an object';
    case 'array':
      return 'an array';
    case 'null':
      return 'null';
    case 'bigint':
      return 'an integer';
    case 'date':
      return 'a date';
    default:
      return `${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}`;
  }
}

interface Bounds {
  min?: number;
  minInclusive?: boolean;
  max?: number;
  maxInclusive?: boolean;
  int?: boolean;
}

/** The limits a schema's checks put on a number or a length (zod 4 keeps them on `_zod.def.checks`). */
function boundsOf(schema: z.ZodType | undefined): Bounds {
  const bounds: Bounds = {};
  const checks = (unwrap(schema)?._zod.def as { checks?: { _zod: { def: Record<string, unknown> } }[] } | undefined)?.checks ?? [];
  for (const check of checks) {
    const def = check._zod.def;
    if (def.check === 'greater_than') Object.assign(bounds, { min: def.value, minInclusive: def.inclusive });
    else if (def.check === 'less_than') Object.assign(bounds, { max: def.value, maxInclusive: def.inclusive });
    else if (def.check === 'min_length') bounds.min = def.minimum as number;
    else if (def.check === 'max_length') bounds.max = def.maximum as number;
    else if (def.check === 'length_equals') bounds.min = bounds.max = def.length as number;
    else if (def.check === 'number_format' && typeof def.format === 'string' && /int/.test(def.format)) bounds.int = true;
  }
  if (bounds.min !== undefined && bounds.minInclusive === undefined) bounds.minInclusive = true;
  if (bounds.max !== undefined && bounds.maxInclusive === undefined) bounds.maxInclusive = true;
  return bounds;
}

/** "an integer from 1 to 100", "a number greater than 0", "an integer". */
function numberRange(fieldSchema: z.ZodType | undefined, int: boolean, fallback: Bounds = {}): string {
  const b = { ...fallback, ...stripUndefined(boundsOf(fieldSchema)) };
  const kind = int || b.int ? 'an integer' : 'a number';
  const { min, max } = b;
  if (min !== undefined && max !== undefined && b.minInclusive && b.maxInclusive) return `${kind} from ${min} to ${max}`;
  const parts: string[] = [];
  if (min !== undefined) parts.push(b.minInclusive ? `of at least ${min}` : `greater than ${min}`);
  if (max !== undefined) parts.push(b.maxInclusive ? `${parts.length ? '' : 'of '}at most ${max}`.trim() : `less than ${max}`);
  return parts.length ? `${kind} ${parts.join(' and ')}` : kind;
}

function sizeRule(issue: Extract<Issue, { code: 'too_big' | 'too_small' }>, fieldSchema: z.ZodType | undefined): string {
  const limit = Number(issue.code === 'too_big' ? issue.maximum : issue.minimum);
  const fromIssue: Bounds = issue.code === 'too_big' ? { max: limit, maxInclusive: issue.inclusive !== false } : { min: limit, minInclusive: issue.inclusive !== false };
  const origin = issue.origin;
  if (origin === 'number' || origin === 'int' || origin === 'bigint') {
    return `must be ${numberRange(fieldSchema, origin === 'int' || origin === 'bigint', fromIssue)}`;
  }
  const unit = origin === 'string' ? 'character' : origin === 'array' || origin === 'set' ? 'item' : origin === 'file' ? 'byte' : origin === 'object' ? 'field' : null;
  if (!unit) return issue.code === 'too_big' ? `must be at most ${limit}` : `must be at least ${limit}`;
  const b = { ...fromIssue, ...stripUndefined(boundsOf(fieldSchema)) };
  const count = (n: number) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (issue.code === 'too_small' && (b.min === 1 || (b.min === 0 && !b.minInclusive)) && b.max === undefined) {
    return origin === 'string' ? 'must not be empty' : `must have at least one ${unit}`;
  }
  const verb = origin === 'string' ? 'must be' : 'must have';
  const tail = origin === 'string' ? ' long' : '';
  if ((issue as { exact?: boolean }).exact || (b.min !== undefined && b.min === b.max)) return `${verb} exactly ${count(limit)}${tail}`;
  if (b.min !== undefined && b.max !== undefined && b.min > 0) return `${verb} ${b.min} to ${count(b.max)}${tail}`;
  return issue.code === 'too_big' ? `${verb} at most ${count(limit)}${tail}` : `${verb} at least ${count(limit)}${tail}`;
}

/** For a length, what was received is the length: the value itself may be long or secret. */
function sizeGot(issue: Extract<Issue, { code: 'too_big' | 'too_small' }>, value: unknown, path: PropertyKey[], options: DescribeOptions): string {
  if (typeof value === 'string' && issue.origin === 'string') return ` (got ${value.length})`;
  if (Array.isArray(value)) return ` (got ${value.length})`;
  if (typeof value === 'number' || typeof value === 'bigint') {
    const shown = showable(typeof value === 'bigint' ? Number(value) : value, path, options);
    return shown === undefined ? '' : ` (got ${shown})`;
  }
  return '';
}

const FORMATS: Record<string, string> = {
  email: 'an email address',
  url: 'a URL',
  uuid: 'a UUID',
  guid: 'a GUID',
  datetime: 'an ISO 8601 date-time such as 2026-01-31T12:00:00Z',
  date: 'a date such as 2026-01-31',
  time: 'a time such as 12:00:00',
  duration: 'an ISO 8601 duration such as PT5M',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  cidrv4: 'an IPv4 range',
  cidrv6: 'an IPv6 range',
  base64: 'base64 text',
  base64url: 'base64url text',
  jwt: 'a JWT',
  e164: 'a phone number in E.164 form',
  hostname: 'a host name',
  hex: 'hexadecimal text',
  lowercase: 'lowercase text',
  uppercase: 'uppercase text',
};

function formatRule(issue: Extract<Issue, { code: 'invalid_format' }>): string {
  const i = issue as typeof issue & { prefix?: string; suffix?: string; includes?: string; pattern?: string };
  switch (issue.format) {
    case 'starts_with':
      return `must start with ${JSON.stringify(i.prefix)}`;
    case 'ends_with':
      return `must end with ${JSON.stringify(i.suffix)}`;
    case 'includes':
      return `must contain ${JSON.stringify(i.includes)}`;
    case 'regex': {
      // A schema that explains its pattern says so in its own message; zod's default names the regex.
      if (!/^Invalid string: must match pattern/.test(issue.message)) return withoutLeadingName(issue.message);
      return `must match the pattern ${i.pattern}`;
    }
    default: {
      const what = FORMATS[issue.format];
      return what ? `must be ${what}` : `must be a valid ${issue.format}`;
    }
  }
}

function withoutLeadingName(message: string): string {
  return READS_ON.test(message) ? message : `is invalid: ${message}`;
}

/** A union: the branch that got furthest speaks, or, when every branch failed at the value's type, the list of types. */
function describeUnion(issue: Extract<Issue, { code: 'invalid_union' }>, path: PropertyKey[], options: DescribeOptions, name: string, got: string): string {
  const i = issue as typeof issue & { discriminator?: string; options?: unknown[]; note?: string };
  if (i.discriminator !== undefined && Array.isArray(i.options)) {
    return `${name} must be one of ${i.options.map((o) => (typeof o === 'string' ? o : JSON.stringify(o))).join(', ')}${got}`;
  }
  const branches = issue.errors ?? [];
  const typeOnly = (b: readonly Issue[]) => b.length === 1 && b[0]!.path.length === 0 && (b[0]!.code === 'invalid_type' || b[0]!.code === 'invalid_value');
  const deeper = branches.filter((b) => b.length > 0 && !typeOnly(b));
  if (deeper.length === 1) {
    const inner = deeper[0]![0]!;
    return stripStop(describeAt(inner, [...path, ...inner.path], options));
  }
  const alternatives = branches.filter(typeOnly).flatMap((b) => {
    const only = b[0]!;
    if (only.code === 'invalid_type') return [expectedType(String(only.expected), undefined)];
    if (only.code === 'invalid_value') return only.values.map((v) => JSON.stringify(v) ?? String(v));
    return [];
  });
  if (alternatives.length > 0 && deeper.length === 0) {
    const unique = [...new Set(alternatives)];
    const list = unique.length === 1 ? unique[0] : `${unique.slice(0, -1).join(', ')} or ${unique.at(-1)}`;
    return `${name} must be ${list}${got}`;
  }
  return `${name} does not match any of the forms it can take${got}`;
}

// ---------------------------------------------------------------------------------------------
// Walking the input and the schema along a path

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let current = input;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.hasOwn(current, segment as PropertyKey)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment as PropertyKey];
  }
  return current;
}

type AnyDef = { type: string; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType; shape?: Record<string, z.ZodType>; element?: z.ZodType; valueType?: z.ZodType; options?: z.ZodType[]; items?: z.ZodType[]; rest?: z.ZodType | null; getter?: () => z.ZodType };

/** Through optional, nullable, default, catch, readonly, pipe (its input side) and lazy. */
function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  for (let i = 0; i < 20 && current; i++) {
    const def = current._zod.def as AnyDef;
    if (def.innerType && ['optional', 'nullable', 'default', 'prefault', 'catch', 'readonly', 'nonoptional', 'success'].includes(def.type)) current = def.innerType;
    else if (def.type === 'pipe') current = (def.in?._zod.def as AnyDef | undefined)?.type === 'transform' ? def.out : def.in;
    else if (def.type === 'lazy' && def.getter) current = def.getter();
    else return current;
  }
  return current;
}

function schemaAt(schema: z.ZodType, path: PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = schema;
  for (const segment of path) {
    const bare = unwrap(current);
    if (!bare) return undefined;
    const def = bare._zod.def as AnyDef;
    if (def.type === 'object') current = def.shape?.[String(segment)];
    else if (def.type === 'array') current = def.element;
    else if (def.type === 'record') current = def.valueType;
    else if (def.type === 'tuple') current = typeof segment === 'number' ? (def.items?.[segment] ?? def.rest ?? undefined) : undefined;
    else if (def.type === 'union' && def.options) {
      // The branch whose objects know the field (a discriminated union's branches share their common fields).
      current = def.options.map((o) => schemaAt(o, [segment])).find((s) => s !== undefined);
    } else if (def.type === 'intersection') {
      const d = def as AnyDef & { left?: z.ZodType; right?: z.ZodType };
      current = (d.left && schemaAt(d.left, [segment])) ?? (d.right && schemaAt(d.right, [segment]));
    } else return undefined;
  }
  return current;
}

// ---------------------------------------------------------------------------------------------

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function stripStop(text: string): string {
  return text.replace(/[.]$/, '');
}

/** One full stop at the end, unless the text already ends a sentence. */
function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}
