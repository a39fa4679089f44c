// Source code cut on definition boundaries: each function, class, method, struct... becomes a heading
// (its signature, so passages carry the name in their heading trail) and a code block (its body).
//
// Cheap and forgiving by design: definitions are recognised by per-language patterns on the first line,
// scopes by indentation (what formatters produce), and a small lexer only keeps comments and multi-line
// strings from being read as code. The source text is kept verbatim and every non-blank character ends up
// in exactly one block, whatever the input: unrecognised code simply stays in larger blocks.
import type { Block, ExtractedDocument } from '../types.js';
import type { TextFormat } from './format.js';

type Kind = 'def' | 'container';

interface Language {
  lineComments: readonly string[];
  blockComment?: readonly [string, string];
  /** String delimiters, longest first. Single-line strings end at the end of the line even when unclosed. */
  strings: readonly { open: string; close: string; multiline: boolean; escapes: boolean }[];
  /** `'` starts a character literal only where one closes (so Rust lifetimes and Scala symbols are not strings). */
  charLiterals?: boolean;
  /** Rust raw strings: r"…", r#"…"#, br"…". */
  rawStrings?: boolean;
  /** PHP: `#[` is an attribute, not a comment. */
  hashBracketIsCode?: boolean;
  /** Definitions recognised anywhere a definition may start, first match wins. */
  patterns: readonly (readonly [RegExp, Kind])[];
  /** Definitions recognised only directly inside a container (methods, constructors). */
  members?: readonly (readonly [RegExp, Kind])[];
  /** Lines that belong to the definition below them: decorators, annotations, attributes. */
  decorator?: RegExp;
  /** At a scope's own indentation, lines that end it and belong to it (`}`, `end`). */
  closer?: RegExp;
  /** At a scope's own indentation, lines that continue its header (`{` on its own line, `where`). */
  continuation?: RegExp;
  /** Outside any definition, only column 0 is trusted (languages recognised by a loose C-like pattern). */
  topLevelAtColumnZero?: boolean;
}

/** Containers nest at most this deep; definitions deeper than that stay in their parent's body. */
const MAX_CONTAINER_DEPTH = 3;
/** A signature longer than this many lines is represented by its first line alone. */
const MAX_HEADING_LINES = 4;
/** How far the end of a signature (brackets balanced) is looked for. */
const MAX_SIGNATURE_LINES = 12;
/** At most this many decorator lines join a definition's heading; longer runs stay a block of their own. */
const MAX_DECORATOR_LINES = 3;
/** Headings longer than this are cut to their first line; a first line longer than this is not a heading. */
const MAX_HEADING_CHARS = 300;
/** Patterns are tested on at most this many characters of a line (minified code has huge lines). */
const MAX_PATTERN_CHARS = 400;

const C_STYLE_COMMENTS = { lineComments: ['//'], blockComment: ['/*', '*/'] } as const;
const DOUBLE_QUOTED = { open: '"', close: '"', multiline: false, escapes: true } as const;
const SINGLE_QUOTED = { open: "'", close: "'", multiline: false, escapes: true } as const;
const TRIPLE_DOUBLE = { open: '"""', close: '"""', multiline: true, escapes: true } as const;
const BRACE_CLOSER = /^[}\])]/;
const BRACE_CONTINUATION = /^(?:\{|where\b|->|=>|:(?!:)|extends\b|implements\b|throws\b|\|\||&&)/;

/** Words that start statements, never a definition, in C-like languages. */
const C_LIKE_STATEMENTS =
  'if|else|for|foreach|while|switch|return|case|do|goto|sizeof|typedef|using|namespace|delete|new|throw|try|catch|finally|lock|yield|await|co_return|co_await|co_yield|static_assert|assert|synchronized|break|continue|var|let|val|print|printf';
/**
 * A C/C++/Java/C# function or method definition: optional type and modifiers, a name (or `operator…`,
 * `~Name`, `Class<T>::name`), then `(`. No `=` before the parenthesis and no `;` at the end (see isCLikeFunction).
 */
const C_LIKE_FUNCTION = new RegExp(
  `^(?:@\\w+(?:\\([^)]*\\))?[ \\t]+)*(?!(?:${C_LIKE_STATEMENTS})\\b)(?:[A-Za-z_][\\w:<>,*&~ \\t\\[\\].?]*?[ \\t*&>\\]?])?(?:(?:[A-Za-z_]\\w*(?:<[^()]*?>)?::)*(?:operator[ \\t]*[^\\s(]+|~?[A-Za-z_]\\w*))[ \\t]*(?:<[^()]*>)?[ \\t]*\\(`,
);

const TS_FUNCTION = /^(?:export[ \t]+(?:default[ \t]+)?)?(?:declare[ \t]+)?(?:async[ \t]+)?function\b/;
const TS_CLASS = /^(?:export[ \t]+(?:default[ \t]+)?)?(?:declare[ \t]+)?(?:abstract[ \t]+)?class\b/;
const TS_NAMESPACE = /^(?:export[ \t]+)?(?:declare[ \t]+)?(?:namespace|module|global)\b[^;=]*\{\s*$/;
const TS_TYPE = /^(?:export[ \t]+)?(?:declare[ \t]+)?(?:interface[ \t]+[\w$]+|type[ \t]+[\w$]+[^=]*=|(?:const[ \t]+)?enum[ \t]+[\w$]+)/;
const TS_FUNCTION_VALUE = /^(?:export[ \t]+)?(?:declare[ \t]+)?(?:const|let|var)[ \t]+[\w$]+[^=]*=[ \t]*(?:async\b[ \t]*)?(?:function\b|.*=>|\($|<)/;
const TS_MEMBER_MODIFIERS = '(?:(?:public|private|protected|static|readonly|async|override|abstract|declare|accessor|get|set)[ \\t]+)*';
const TS_METHOD = new RegExp(
  `^${TS_MEMBER_MODIFIERS}(?!(?:if|for|while|switch|catch|return|function|new|super|this|await|yield|typeof|delete|void|else|do|try|with|throw)\\b)\\*?[ \\t]*(?:#?[\\w$]+|\\[[^\\]]+\\]|'[^']*'|"[^"]*")[ \\t]*\\??[ \\t]*(?:<[^()]*>)?[ \\t]*\\(`,
);
const TS_ARROW_MEMBER = new RegExp(`^${TS_MEMBER_MODIFIERS}#?[\\w$]+[ \\t]*\\??[^=(]*=[ \\t]*(?:async\\b[ \\t]*)?(?:function\\b|[^;]*=>)`);

const JS_TS: Language = {
  ...C_STYLE_COMMENTS,
  strings: [{ open: '`', close: '`', multiline: true, escapes: true }, DOUBLE_QUOTED, SINGLE_QUOTED],
  patterns: [
    [TS_FUNCTION, 'def'],
    [TS_CLASS, 'container'],
    [TS_NAMESPACE, 'container'],
    [TS_TYPE, 'def'],
    [TS_FUNCTION_VALUE, 'def'],
  ],
  members: [
    [TS_METHOD, 'def'],
    [TS_ARROW_MEMBER, 'def'],
  ],
  decorator: /^@[\w$]/,
  closer: BRACE_CLOSER,
  continuation: BRACE_CONTINUATION,
};

const PYTHON: Language = {
  lineComments: ['#'],
  strings: [TRIPLE_DOUBLE, { open: "'''", close: "'''", multiline: true, escapes: true }, DOUBLE_QUOTED, SINGLE_QUOTED],
  patterns: [
    [/^(?:async[ \t]+)?def[ \t]+\w+/, 'def'],
    [/^class[ \t]+\w+/, 'container'],
  ],
  decorator: /^@[\w.]/,
  continuation: /^[)\]}]/,
};

const GO: Language = {
  ...C_STYLE_COMMENTS,
  strings: [{ open: '`', close: '`', multiline: true, escapes: false }, DOUBLE_QUOTED],
  charLiterals: true,
  patterns: [
    [/^func\b/, 'def'],
    [/^type[ \t]+\w+/, 'def'],
  ],
  closer: BRACE_CLOSER,
  continuation: BRACE_CONTINUATION,
};

const RUST_VISIBILITY = '(?:pub(?:[ \\t]*\\([^)]*\\))?[ \\t]+)?';
const RUST: Language = {
  ...C_STYLE_COMMENTS,
  strings: [{ open: '"', close: '"', multiline: true, escapes: true }],
  charLiterals: true,
  rawStrings: true,
  patterns: [
    [new RegExp(`^${RUST_VISIBILITY}(?:default[ \\t]+)?(?:const[ \\t]+)?(?:async[ \\t]+)?(?:unsafe[ \\t]+)?(?:extern[ \\t]+(?:"[^"]*"[ \\t]+)?)?fn\\b`), 'def'],
    [new RegExp(`^${RUST_VISIBILITY}(?:unsafe[ \\t]+)?(?:impl|trait)\\b`), 'container'],
    [new RegExp(`^${RUST_VISIBILITY}mod[ \\t]+\\w+[ \\t]*\\{`), 'container'],
    [new RegExp(`^${RUST_VISIBILITY}(?:struct|enum|union|type)[ \\t]+\\w+`), 'def'],
    [/^macro_rules![ \t]*\w+/, 'def'],
  ],
  decorator: /^#!?\[/,
  closer: BRACE_CLOSER,
  continuation: BRACE_CONTINUATION,
};

const JAVA: Language = {
  ...C_STYLE_COMMENTS,
  strings: [TRIPLE_DOUBLE, DOUBLE_QUOTED],
  charLiterals: true,
  patterns: [
    [/^(?:(?:public|protected|private|abstract|static|final|sealed|non-sealed|strictfp)[ \t]+)*(?:class|interface|enum|record|@interface)[ \t]+\w+/, 'container'],
  ],
  members: [[C_LIKE_FUNCTION, 'def']],
  decorator: /^@(?!interface\b)\w/,
  closer: BRACE_CLOSER,
  continuation: BRACE_CONTINUATION,
  topLevelAtColumnZero: true,
};

const CSHARP: Language = {
  ...C_STYLE_COMMENTS,
  strings: [
    TRIPLE_DOUBLE,
    { open: '@"', close: '"', multiline: true, escapes: false },
    { open: '$@"', close: '"', multiline: true, escapes: false },
    { open: '@$"', close: '"', multiline: true, escapes: false },
    DOUBLE_QUOTED,
  ],
  charLiterals: true,
  patterns: [
    [/^namespace[ \t]+[\w.]+[ \t]*\{?[ \t]*$/, 'container'],
    [
      /^(?:(?:public|protected|private|internal|abstract|static|sealed|partial|readonly|unsafe|new|file|ref)[ \t]+)*(?:class|interface|struct|enum|record(?:[ \t]+(?:class|struct))?)[ \t]+\w+/,
      'container',
    ],
  ],
  members: [[C_LIKE_FUNCTION, 'def']],
  decorator: /^\[[A-Za-z_]/,
  closer: BRACE_CLOSER,
  continuation: BRACE_CONTINUATION,
  topLevelAtColumnZero: true,
};

const C_FAMILY: Language = {
  ...C_STYLE_COMMENTS,
  strings: [DOUBLE_QUOTED],
  charLiterals: true,
  patterns: [
    [/^(?:template[ \t]*<.*>[ \t]*)?(?:typedef[ \t]+)?(?:class|struct|union)\b[^;]*$/, 'container'],
    [/^(?:typedef[ \t]+)?enum\b[^;]*$/, 'def'],
    [/^(?:inline[ \t]+)?namespace\b[^;]*$/, 'container'],
    [C_LIKE_FUNCTION, 'def'],
  ],
  members: [[C_LIKE_FUNCTION, 'def']],
  // Also a return type on its own line above the name (`static int` / `count(...)`).
  decorator: /^(?:template[ \t]*<.*>|\[\[.*\]\]|[A-Za-z_][\w \t*&:<>,]*[\w*&>])[ \t]*$/,
  closer: BRACE_CLOSER,
  // Access specifiers sit at the class's own indentation in common C++ styles.
  continuation: new RegExp(`${BRACE_CONTINUATION.source}|^(?:public|private|protected)(?:[ \\t]+(?:slots|Q_SLOTS))?[ \\t]*:(?!:)|^(?:signals|Q_SIGNALS)[ \\t]*:`),
  topLevelAtColumnZero: true,
};

const KOTLIN_MODIFIERS =
  '(?:(?:@\\w+(?:\\([^)]*\\))?|public|private|protected|internal|open|abstract|sealed|final|override|data|enum|annotation|inner|value|inline|suspend|operator|infix|tailrec|external|actual|expect|companion|const|lateinit)[ \\t]+)*';
const KOTLIN: Language = {
  ...C_STYLE_COMMENTS,
  strings: [TRIPLE_DOUBLE, DOUBLE_QUOTED],
  charLiterals: true,
  patterns: [
    [new RegExp(`^${KOTLIN_MODIFIERS}(?:fun[ \\t]+)?(?:class|interface|object)\\b`), 'container'],
    [new RegExp(`^${KOTLIN_MODIFIERS}(?:fun|typealias)\\b`), 'def'],
    [new RegExp(`^${KOTLIN_MODIFIERS}constructor[ \\t]*\\(`), 'def'],
  ],
  decorator: /^@\w/,
  closer: BRACE_CLOSER,
  continuation: BRACE_CONTINUATION,
};

const SWIFT_MODIFIERS =
  '(?:(?:@\\w+(?:\\([^)]*\\))?|public|private|fileprivate|internal|open|final|static|class|override|mutating|nonmutating|convenience|required|dynamic|lazy|indirect|nonisolated|package)[ \\t]+)*';
const SWIFT: Language = {
  ...C_STYLE_COMMENTS,
  strings: [TRIPLE_DOUBLE, DOUBLE_QUOTED],
  patterns: [
    [new RegExp(`^${SWIFT_MODIFIERS}(?:func|init[?!]?|deinit|subscript)\\b`), 'def'],
    [new RegExp(`^${SWIFT_MODIFIERS}(?:class|struct|enum|protocol|extension|actor)[ \\t]+\\w`), 'container'],
  ],
  decorator: /^@\w+(?:\(.*\))?[ \t]*$/,
  closer: BRACE_CLOSER,
  continuation: BRACE_CONTINUATION,
};

const SCALA_MODIFIERS = '(?:(?:private(?:\\[\\w+\\])?|protected(?:\\[\\w+\\])?|final|sealed|abstract|implicit|lazy|override|case|open|inline|transparent|opaque)[ \\t]+)*';
const SCALA: Language = {
  ...C_STYLE_COMMENTS,
  strings: [TRIPLE_DOUBLE, DOUBLE_QUOTED],
  charLiterals: true,
  patterns: [
    [new RegExp(`^${SCALA_MODIFIERS}(?:class|trait|object|enum|extension|given)\\b`), 'container'],
    [new RegExp(`^${SCALA_MODIFIERS}(?:def|type)[ \\t]+`), 'def'],
  ],
  decorator: /^@\w/,
  closer: BRACE_CLOSER,
  continuation: BRACE_CONTINUATION,
};

const RUBY: Language = {
  lineComments: ['#'],
  strings: [DOUBLE_QUOTED, SINGLE_QUOTED],
  patterns: [
    [/^(?:class|module)[ \t]+(?:[A-Z]|<<)/, 'container'],
    [/^(?:(?:private|protected|public|module_function)[ \t]+)?def[ \t]+\S/, 'def'],
  ],
  closer: /^(?:end\b|[}\])])/,
};

const PHP: Language = {
  lineComments: ['//', '#'],
  blockComment: ['/*', '*/'],
  strings: [DOUBLE_QUOTED, SINGLE_QUOTED],
  hashBracketIsCode: true,
  patterns: [
    [/^(?:(?:abstract|final|readonly)[ \t]+)*(?:class|interface|trait|enum)[ \t]+\w+/, 'container'],
    [/^(?:(?:public|private|protected|static|abstract|final)[ \t]+)*function[ \t]+&?\w+/, 'def'],
  ],
  decorator: /^#\[/,
  closer: BRACE_CLOSER,
  continuation: BRACE_CONTINUATION,
};

const LANGUAGES: Readonly<Record<string, Language>> = {
  'text/x-python': PYTHON,
  'text/javascript': JS_TS,
  'text/x-typescript': JS_TS,
  'text/x-go': GO,
  'text/x-rust': RUST,
  'text/x-java': JAVA,
  'text/x-c': C_FAMILY,
  'text/x-c++': C_FAMILY,
  'text/x-csharp': CSHARP,
  'text/x-ruby': RUBY,
  'text/x-php': PHP,
  'text/x-kotlin': KOTLIN,
  'text/x-swift': SWIFT,
  'text/x-scala': SCALA,
};

/** Source code in the languages above; code in other languages (shell, SQL, Lua, ...) is read as plain text. */
export const sourceCodeFormat: TextFormat = {
  name: 'source code',
  contentTypes: Object.keys(LANGUAGES),
  // The application/ spellings servers and older registrations use (RFC 9239 made text/javascript the one).
  aliases: {
    'application/javascript': 'text/javascript',
    'application/x-javascript': 'text/javascript',
    'application/ecmascript': 'text/javascript',
    'application/typescript': 'text/x-typescript',
    'application/x-typescript': 'text/x-typescript',
    'application/x-httpd-php': 'text/x-php',
    'application/x-python': 'text/x-python',
    'application/x-ruby': 'text/x-ruby',
  },
  extensions: [
    '.py', '.pyi', '.js', '.mjs', '.cjs', '.jsx', '.ts', '.mts', '.cts', '.tsx', '.go', '.rs', '.java', '.c', '.h',
    '.cc', '.cpp', '.cxx', '.hpp', '.hh', '.cs', '.rb', '.php', '.kt', '.kts', '.swift', '.scala',
  ],
  evidence: ['text'],
  reads: 'text',
  extract: extractCode,
};

function languageOf(contentType: string): Language | undefined {
  const bare = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  return LANGUAGES[bare];
}

export function isSourceCodeType(contentType: string): boolean {
  return languageOf(contentType) !== undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Lexing: which lines are code, comments, or inside a string

interface Line {
  start: number;
  /** End of the line's content, before the newline. */
  end: number;
  /** Indentation width (a tab counts 4). */
  indent: number;
  /** Offset of the first and after the last non-blank character; first === last for blank lines. */
  first: number;
  last: number;
  /** The line starts inside a block comment or a multi-line string. */
  startsInside: 'comment' | 'string' | undefined;
  /** Holds code outside comments (string contents count as code). */
  hasCode: boolean;
  /** Net count of `(` and `[` minus `)` and `]` outside strings and comments. */
  parens: number;
}

type LexState = { kind: 'comment'; close: string } | { kind: 'string'; close: string; multiline: boolean; escapes: boolean } | undefined;

const CHAR_LITERAL = /'(?:\\(?:u\{[0-9a-fA-F]{1,6}\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[0-7]{1,3}|.)|[^\\'\n])'/y;
const RAW_STRING = /b?r(#*)"/y;

function lexLines(text: string, language: Language): Line[] {
  const lines: Line[] = [];
  let state: LexState;
  let position = 0;
  while (position <= text.length) {
    const newline = text.indexOf('\n', position);
    const end = newline === -1 ? text.length : newline;
    let first = position;
    let indent = 0;
    while (first < end) {
      const char = text.charCodeAt(first);
      if (char === 0x20) indent++;
      else if (char === 0x09) indent += 4;
      else if (!isSpace(char)) break;
      first++;
    }
    let last = end;
    while (last > first && isSpace(text.charCodeAt(last - 1))) last--;

    const line: Line = { start: position, end, indent, first, last, startsInside: state?.kind, hasCode: false, parens: 0 };
    let i = first;
    while (i < last) {
      if (state !== undefined) {
        if (state.kind === 'comment') {
          const close = text.indexOf(state.close, i);
          if (close === -1 || close >= last) {
            i = last;
          } else {
            i = close + state.close.length;
            state = undefined;
          }
          continue;
        }
        line.hasCode = true;
        let closed = false;
        while (i < last) {
          if (state.escapes && text.charCodeAt(i) === 0x5c) {
            i += 2;
            continue;
          }
          if (text.startsWith(state.close, i)) {
            i += state.close.length;
            closed = true;
            break;
          }
          i++;
        }
        if (closed) state = undefined;
        continue;
      }
      const char = text.charCodeAt(i);
      if (isSpace(char)) {
        i++;
        continue;
      }
      if (language.lineComments.some((token) => text.startsWith(token, i))) {
        if (!(language.hashBracketIsCode && text.startsWith('#[', i))) break;
      }
      if (language.blockComment !== undefined && text.startsWith(language.blockComment[0], i)) {
        state = { kind: 'comment', close: language.blockComment[1] };
        i += language.blockComment[0].length;
        continue;
      }
      if (language.rawStrings && (char === 0x72 || char === 0x62) && !isIdentifierChar(text.charCodeAt(i - 1))) {
        RAW_STRING.lastIndex = i;
        const raw = RAW_STRING.exec(text);
        if (raw !== null) {
          line.hasCode = true;
          state = { kind: 'string', close: `"${raw[1] ?? ''}`, multiline: true, escapes: false };
          i += raw[0].length;
          continue;
        }
      }
      const opener = language.strings.find((candidate) => text.startsWith(candidate.open, i));
      if (opener !== undefined) {
        line.hasCode = true;
        state = { kind: 'string', close: opener.close, multiline: opener.multiline, escapes: opener.escapes };
        i += opener.open.length;
        continue;
      }
      line.hasCode = true;
      if (char === 0x27 && language.charLiterals) {
        CHAR_LITERAL.lastIndex = i;
        const literal = CHAR_LITERAL.exec(text);
        i += literal !== null && literal.index === i ? literal[0].length : 1;
        continue;
      }
      if (char === 0x28 || char === 0x5b) line.parens++;
      else if (char === 0x29 || char === 0x5d) line.parens--;
      i++;
    }
    // Strings that cannot span lines end with theirs, closed or not.
    if (state?.kind === 'string' && !state.multiline) state = undefined;
    lines.push(line);
    if (newline === -1) break;
    position = newline + 1;
  }
  return lines;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0b || code === 0x0c || code === 0x0d || code === 0xa0 || code === 0xfeff;
}

function isIdentifierChar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;
}

// ---------------------------------------------------------------------------------------------------------
// Finding definitions

interface Scope {
  indent: number;
  kind: Kind;
  /** Indentation of the first code line inside a container: where its members are. */
  bodyIndent?: number;
}

/** A definition's heading: lines `start`..`end` (inclusive), at `level`. */
interface Heading {
  start: number;
  end: number;
  level: number;
}

interface Outline {
  headings: Heading[];
  /** Lines where a new code block starts (a scope ended, or comments lead into a definition). */
  breaks: Set<number>;
}

function outline(text: string, lines: readonly Line[], language: Language): Outline {
  const headings: Heading[] = [];
  const breaks = new Set<number>();
  const stack: Scope[] = [];
  const isBlank = (line: Line): boolean => line.first === line.last;
  const content = (line: Line): string => text.slice(line.first, Math.min(line.last, line.first + MAX_PATTERN_CHARS));

  /** The first line a new heading may take: decorators and comments are never taken from the previous heading. */
  let free = 0;
  /** The last line that belongs to the innermost open scope (its code, strings, indented comments). */
  let lastBodyLine = -1;
  /** Where a block starts after a scope's closing line, unless an outer scope's closing line follows it. */
  let pendingBreak: number | undefined;
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] as Line;
    // Blank lines, comment-only lines and lines inside multi-line strings neither end scopes nor start definitions.
    if (isBlank(line) || line.startsInside !== undefined || !line.hasCode) {
      const innermost = stack[stack.length - 1];
      if (!isBlank(line) && (line.startsInside === 'string' || (innermost !== undefined && line.indent > innermost.indent))) lastBodyLine = index;
      index++;
      continue;
    }
    const code = content(line);

    // Close the scopes this line is outside of; a closing line (`}`, `end`) at a scope's indentation is its last.
    let closeAfter = false;
    let closedBefore = false;
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as Scope;
      if (line.indent > top.indent) break;
      if (line.indent === top.indent) {
        const continues = language.continuation?.test(code) === true || (BRACE_CLOSER.test(code) && /[{(]\s*$/.test(code));
        if (continues) break;
        if (language.closer?.test(code) === true) {
          closeAfter = true;
          break;
        }
      }
      stack.pop();
      closedBefore = true;
    }
    // A new block starts after the last line of the scopes that ended, so comments between them and this line
    // go with what follows; an outer scope's closing line (`}` after a class's last method) stays with its block.
    if (closedBefore && !closeAfter) breaks.add(lastBodyLine + 1);
    if (pendingBreak !== undefined && !closeAfter) breaks.add(pendingBreak);
    pendingBreak = undefined;
    lastBodyLine = index;

    const top = stack[stack.length - 1];
    if (top?.kind === 'container' && top.bodyIndent === undefined && line.indent > top.indent) top.bodyIndent = line.indent;
    // A definition on a very long line (minified code) would make a useless heading: it stays code.
    const fits = line.last - line.first <= MAX_HEADING_CHARS;
    const match = closeAfter || !fits ? undefined : definitionAt(code, line, top, stack, language);
    if (match === undefined) {
      if (closeAfter) {
        stack.pop();
        pendingBreak = index + 1;
      }
      index++;
      continue;
    }

    let signatureEnd = findSignatureEnd(lines, index);
    // Allman style: a `{` alone on the next line is part of the header.
    const next = lines[signatureEnd + 1];
    if (next !== undefined && next.indent === line.indent && text.slice(next.first, next.last) === '{') signatureEnd++;
    let start = index;
    // Decorators directly above join the heading; comments directly above form their own block.
    let decoratorStart = index;
    while (decoratorStart > free) {
      const above = lines[decoratorStart - 1] as Line;
      if (isBlank(above) || above.startsInside !== undefined || !above.hasCode || above.indent !== line.indent) break;
      if (language.decorator?.test(content(above)) !== true) break;
      decoratorStart--;
    }
    if (index - decoratorStart <= MAX_DECORATOR_LINES) start = decoratorStart;
    else breaks.add(decoratorStart);
    let commentStart = decoratorStart;
    while (commentStart > free) {
      const above = lines[commentStart - 1] as Line;
      if (isBlank(above) || above.hasCode) break;
      commentStart--;
    }
    if (commentStart < decoratorStart) breaks.add(commentStart);

    const containers = stack.filter((scope) => scope.kind === 'container').length;
    const whole = signatureEnd - start + 1 <= MAX_HEADING_LINES && (lines[signatureEnd] as Line).last - (lines[start] as Line).first <= MAX_HEADING_CHARS;
    const end = whole ? signatureEnd : index;
    headings.push({ start, end, level: 2 + containers });
    stack.push({ indent: line.indent, kind: match });
    // The rest of the signature (parameters over several lines, a closing `):` at column 0) is skipped.
    index = signatureEnd + 1;
    free = end + 1;
    lastBodyLine = signatureEnd;
  }
  // Comments after the last definition, outside it, are not its body either.
  if (stack.length > 0) breaks.add(lastBodyLine + 1);
  return { headings, breaks };
}

/** The kind of definition a line starts, if one may start where it is. */
function definitionAt(code: string, line: Line, top: Scope | undefined, stack: readonly Scope[], language: Language): Kind | undefined {
  let patterns: readonly (readonly [RegExp, Kind])[];
  if (top === undefined) {
    if (language.topLevelAtColumnZero && line.indent !== 0) return undefined;
    patterns = language.patterns;
  } else if (top.kind === 'container' && line.indent === top.bodyIndent) {
    if (stack.filter((scope) => scope.kind === 'container').length >= MAX_CONTAINER_DEPTH) return undefined;
    patterns = language.members === undefined ? language.patterns : [...language.patterns, ...language.members];
  } else {
    return undefined; // inside a function body, or deeper than a container's members
  }
  for (const [pattern, kind] of patterns) {
    if (!pattern.test(code)) continue;
    if (pattern === C_LIKE_FUNCTION && !isCLikeFunction(code)) continue;
    if (top !== undefined && pattern !== C_LIKE_FUNCTION && kind === 'def' && /;\s*$/.test(code) && language !== PYTHON) continue;
    return kind;
  }
  return undefined;
}

/** Declarations (`;` at the end) and initialisers (`=` before the parenthesis) are not definitions. */
function isCLikeFunction(code: string): boolean {
  if (/;\s*(?:\/\/.*|\/\*.*)?$/.test(code)) return false;
  const before = code.slice(0, code.indexOf('('));
  return !before.includes('=') || /\boperator\b/.test(before);
}

/** The line where a signature's brackets balance (parameters may span lines), within a few lines. */
function findSignatureEnd(lines: readonly Line[], start: number): number {
  let depth = 0;
  for (let i = start; i < lines.length && i < start + MAX_SIGNATURE_LINES; i++) {
    depth += (lines[i] as Line).parens;
    if (depth <= 0) return i;
  }
  return start;
}

// ---------------------------------------------------------------------------------------------------------
// Blocks

export function extractCode(text: string, contentType: string): ExtractedDocument {
  const language = languageOf(contentType);
  const lines = lexLines(text, language ?? PYTHON);
  const { headings, breaks } = language === undefined ? { headings: [], breaks: new Set<number>() } : outline(text, lines, language);

  const blocks: Block[] = [];
  /** A run of lines as one code block, trimmed to its first and last non-blank character. */
  const pushCode = (from: number, to: number): void => {
    let first = from;
    while (first <= to && (lines[first] as Line).first === (lines[first] as Line).last) first++;
    let last = to;
    while (last >= first && (lines[last] as Line).first === (lines[last] as Line).last) last--;
    if (first > last) return;
    blocks.push({ type: 'code', charStart: (lines[first] as Line).first, charEnd: (lines[last] as Line).last });
  };
  /** Code outside definitions: split further at blank lines, like paragraphs. */
  const pushLoose = (from: number, to: number): void => {
    let runStart = -1;
    for (let i = from; i <= to + 1; i++) {
      const blank = i > to || (lines[i] as Line).first === (lines[i] as Line).last;
      if (!blank && runStart < 0) runStart = i;
      if (blank && runStart >= 0 && !(i <= to && (lines[i] as Line).startsInside !== undefined)) {
        pushCode(runStart, i - 1);
        runStart = -1;
      }
    }
  };
  /** Lines from..to: a definition's body when it follows its heading, else loose code; cut at breaks. */
  const pushSegment = (from: number, to: number, isBody: boolean): void => {
    let segmentStart = from;
    let body = isBody;
    for (let i = from + 1; i <= to + 1; i++) {
      if (i <= to && !breaks.has(i)) continue;
      if (body) pushCode(segmentStart, i - 1);
      else pushLoose(segmentStart, i - 1);
      segmentStart = i;
      body = false;
    }
  };

  let cursor = 0;
  let afterHeading = false;
  for (const heading of headings) {
    if (heading.start > cursor) pushSegment(cursor, heading.start - 1, afterHeading);
    const first = lines[heading.start] as Line;
    const last = lines[heading.end] as Line;
    blocks.push({ type: 'heading', level: heading.level, charStart: first.first, charEnd: last.last });
    cursor = heading.end + 1;
    afterHeading = true;
  }
  if (cursor < lines.length) pushSegment(cursor, lines.length - 1, afterHeading);
  return { text, blocks };
}
