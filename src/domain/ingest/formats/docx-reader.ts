// DOCX to HTML, read as a stream: each part is inflated from the zip chunk by chunk into a SAX parser, and
// only the HTML (about the size of the document's text) and the style and numbering tables are kept. A
// reader that builds a model of the whole document first (mammoth) holds about 130 times the XML: 2.1 GB
// of memory for a valid 48 KB file with a 16 MiB word/document.xml.
//
// The HTML has the shape mammoth's default style map gives, which ./office-reader.ts reads: h1..h6 for
// paragraphs styled "Heading 1".."Heading 6" (and "Heading"), ul/ol with li for numbered paragraphs (bullet
// levels are ul), p for the rest, table/tr/td for tables (nested ones too; a merged cell's text once, in its
// first cell, and a td for every grid column it covers, so the columns keep their header),
// footnote and endnote references as [n] with the notes in an ol at the end. Deleted and moved-away text,
// drawings and the Choice of a markup-compatibility alternative (its Fallback is read) are left out; text
// boxes of a paragraph follow it.
import { StringDecoder } from 'node:string_decoder';
import { Parser } from 'htmlparser2';
import { entryChunks, resolvePartName, type ZipEntry } from '../zip.js';

type Handlers = {
  onopentag?: (name: string, attributes: Record<string, string>) => void;
  onclosetag?: (name: string) => void;
  ontext?: (text: string) => void;
};

const RELATIONSHIP = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/';

/** Elements whose content is never read: deletions, moves away, drawings, the Choice of an alternative. */
const SKIPPED = new Set(['w:del', 'w:moveFrom', 'w:drawing', 'mc:Choice', 'w:instrText', 'w:delText', 'w:sectPr', 'w:pPrChange']);

interface Level {
  ordered: boolean;
}

interface Numbering {
  /** numId → abstractNumId */
  nums: Map<string, string>;
  abstracts: Map<string, { levels: Map<string, Level>; styleLink: string | undefined }>;
  byParagraphStyle: Map<string, Level>;
}

interface Styles {
  /** Paragraph style id → name. */
  paragraphNames: Map<string, string>;
  /** Numbering style id → the numId its paragraph properties name. */
  numberingNumIds: Map<string, string>;
}

interface NoteReference {
  kind: 'footnote' | 'endnote';
  id: string;
}

/** Converts the package's main document (found in `entries`) to HTML; throws when it is missing or unreadable. */
export async function docxToHtml(bytes: Buffer, entries: readonly ZipEntry[], checkDeadline: () => void): Promise<string> {
  const byName = new Map(entries.map((entry) => [entry.name, entry]));
  const read = async (name: string | undefined, handlers: Handlers): Promise<boolean> => {
    const entry = name === undefined ? undefined : byName.get(name);
    if (entry === undefined) return false;
    await parsePart(bytes, entry, handlers, checkDeadline);
    return true;
  };

  const packageRels = await relationships('_rels/.rels', '', read);
  const main = [...packageRels.values()].find((rel) => rel.type === `${RELATIONSHIP}officeDocument`)?.target ?? 'word/document.xml';
  if (!byName.has(main)) throw new Error(`the package has no main document part (${main})`);
  const slash = main.lastIndexOf('/');
  const documentRels = await relationships(`${main.slice(0, slash + 1)}_rels/${main.slice(slash + 1)}.rels`, main.slice(0, slash + 1), read);
  const related = (type: string, fallback: string): string =>
    [...documentRels.values()].find((rel) => rel.type === `${RELATIONSHIP}${type}`)?.target ?? fallback;

  const styles = await readStyles(related('styles', 'word/styles.xml'), read);
  const numbering = await readNumbering(related('numbering', 'word/numbering.xml'), read);
  const converter = new BodyConverter(styles, numbering);
  await read(main, converter.handlers());
  let html = converter.finish();

  const references = converter.references;
  if (references.length > 0) {
    const notes = new Map<string, string>();
    for (const kind of ['footnote', 'endnote'] as const) {
      const wanted = new Set(references.filter((ref) => ref.kind === kind).map((ref) => ref.id));
      if (wanted.size === 0) continue;
      const noteConverter = new BodyConverter(styles, numbering, { kind, wanted, found: (id, noteHtml) => notes.set(`${kind}:${id}`, noteHtml) });
      await read(related(`${kind}s`, `word/${kind}s.xml`), noteConverter.handlers());
    }
    const items = references.map((ref) => notes.get(`${ref.kind}:${ref.id}`)).filter((note): note is string => note !== undefined && note !== '');
    if (items.length > 0) html += `<ol>${items.map((note) => `<li>${note}</li>`).join('')}</ol>`;
  }
  return html;
}

/** Streams one part through an XML parser: a chunk of inflated bytes at a time. */
async function parsePart(bytes: Buffer, entry: ZipEntry, handlers: Handlers, checkDeadline: () => void): Promise<void> {
  const parser = new Parser(handlers, { xmlMode: true, decodeEntities: true });
  // A chunk can end inside a multi-byte character; the decoder keeps its first bytes for the next one.
  const decoder = new StringDecoder('utf8');
  for await (const chunk of entryChunks(bytes, entry)) {
    checkDeadline();
    parser.write(decoder.write(chunk));
  }
  parser.end(decoder.end());
}

type ReadPart = (name: string | undefined, handlers: Handlers) => Promise<boolean>;

/** Id → {type, target} of a .rels part, internal targets resolved against `base`. */
async function relationships(name: string, base: string, read: ReadPart): Promise<Map<string, { type: string; target: string }>> {
  const rels = new Map<string, { type: string; target: string }>();
  await read(name, {
    onopentag(tag, attributes) {
      if (tag !== 'Relationship' || attributes.TargetMode === 'External') return;
      const { Id: id, Type: type, Target: target } = attributes;
      if (id && type && target) rels.set(id, { type, target: resolvePartName(base, target) });
    },
  });
  return rels;
}

async function readStyles(name: string, read: ReadPart): Promise<Styles> {
  const styles: Styles = { paragraphNames: new Map(), numberingNumIds: new Map() };
  let style: { id: string; type: string } | undefined;
  await read(name, {
    onopentag(tag, attributes) {
      if (tag === 'w:style') style = { id: attributes['w:styleId'] ?? '', type: attributes['w:type'] ?? '' };
      else if (style === undefined) return;
      else if (tag === 'w:name' && style.type === 'paragraph') styles.paragraphNames.set(style.id, attributes['w:val'] ?? '');
      else if (tag === 'w:numId' && style.type === 'numbering' && attributes['w:val'] !== undefined) styles.numberingNumIds.set(style.id, attributes['w:val']);
    },
    onclosetag(tag) {
      if (tag === 'w:style') style = undefined;
    },
  });
  return styles;
}

async function readNumbering(name: string, read: ReadPart): Promise<Numbering> {
  const numbering: Numbering = { nums: new Map(), abstracts: new Map(), byParagraphStyle: new Map() };
  let abstract: { levels: Map<string, Level>; styleLink: string | undefined } | undefined;
  // A level without an index is taken as level 0 (some producers write them so).
  let level: { index: string | undefined; format: string | undefined; style: string | undefined } | undefined;
  let unindexed: Level | undefined;
  let num: string | undefined;
  await read(name, {
    onopentag(tag, attributes) {
      switch (tag) {
        case 'w:abstractNum':
          abstract = { levels: new Map(), styleLink: undefined };
          unindexed = undefined;
          numbering.abstracts.set(attributes['w:abstractNumId'] ?? '', abstract);
          break;
        case 'w:lvl':
          level = { index: attributes['w:ilvl'], format: undefined, style: undefined };
          break;
        case 'w:numFmt':
          if (level !== undefined) level.format = attributes['w:val'];
          break;
        case 'w:pStyle':
          if (level !== undefined) level.style = attributes['w:val'];
          break;
        case 'w:numStyleLink':
          if (abstract !== undefined) abstract.styleLink = attributes['w:val'];
          break;
        case 'w:num':
          num = attributes['w:numId'];
          break;
        case 'w:abstractNumId':
          if (num !== undefined && attributes['w:val'] !== undefined) numbering.nums.set(num, attributes['w:val']);
          break;
      }
    },
    onclosetag(tag) {
      if (tag === 'w:lvl' && level !== undefined && abstract !== undefined) {
        const found: Level = { ordered: level.format !== 'bullet' };
        if (level.index === undefined) unindexed = found;
        else abstract.levels.set(level.index, found);
        if (level.style !== undefined) numbering.byParagraphStyle.set(level.style, found);
        level = undefined;
      } else if (tag === 'w:abstractNum') {
        if (abstract !== undefined && unindexed !== undefined && !abstract.levels.has('0')) abstract.levels.set('0', unindexed);
        abstract = undefined;
      } else if (tag === 'w:num') {
        num = undefined;
      }
    },
  });
  return numbering;
}

function findLevel(numbering: Numbering, styles: Styles, numId: string, level: string, seen = new Set<string>()): Level | undefined {
  if (seen.has(numId)) return undefined;
  seen.add(numId);
  const abstractId = numbering.nums.get(numId);
  const abstract = abstractId === undefined ? undefined : numbering.abstracts.get(abstractId);
  if (abstract === undefined) return undefined;
  if (abstract.styleLink === undefined) return abstract.levels.get(level);
  const linked = styles.numberingNumIds.get(abstract.styleLink);
  return linked === undefined ? undefined : findLevel(numbering, styles, linked, level, seen);
}

function headingLevel(styleId: string | undefined, styleName: string | undefined): number | undefined {
  for (const candidate of [styleId, styleName]) {
    const match = candidate === undefined ? null : /^heading ?([1-6])?$/i.exec(candidate);
    if (match !== null) return Number(match[1] ?? 1);
  }
  return undefined;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

interface Frame {
  kind: 'root' | 'table' | 'row' | 'cell' | 'paragraph';
  out: string;
  /** Containers (root, cell): the list element open at the end of `out`. */
  list?: 'ul' | 'ol' | undefined;
  /** Paragraphs: blocks found inside it (text boxes), written after it. */
  extra?: string;
  style?: string;
  numId?: string;
  ilvl?: string;
  /** A paragraph whose mark is deleted: its content joins the next paragraph. A deleted row. A merged cell's continuation. */
  dropped?: boolean;
  /** Cells: the grid columns it spans. */
  span?: number;
}

interface NotesPart {
  kind: 'footnote' | 'endnote';
  wanted: Set<string>;
  found: (id: string, html: string) => void;
}

/** Body XML (document, footnotes or endnotes) to HTML, element by element. */
class BodyConverter {
  readonly references: NoteReference[] = [];
  private readonly stack: Frame[] = [];
  private readonly path: string[] = [];
  private skipDepth = 0;
  private inText = false;
  private carried = '';
  private noteId: string | undefined;

  constructor(
    private readonly styles: Styles,
    private readonly numbering: Numbering,
    private readonly notes?: NotesPart,
  ) {
    if (notes === undefined) this.stack.push({ kind: 'root', out: '' });
  }

  handlers(): Handlers {
    return {
      onopentag: (name, attributes) => this.open(name, attributes),
      onclosetag: (name) => this.close(name),
      ontext: (text) => {
        if (this.inText && this.skipDepth === 0) this.appendInline(escapeHtml(text));
      },
    };
  }

  finish(): string {
    const root = this.stack[0];
    if (root === undefined) return '';
    closeList(root);
    return root.out;
  }

  private open(name: string, attributes: Record<string, string>): void {
    const parent = this.path.at(-1);
    this.path.push(name);
    if (this.skipDepth > 0) {
      this.skipDepth++;
      return;
    }
    if (this.notes !== undefined && name === `w:${this.notes.kind}`) {
      const id = attributes['w:id'] ?? '';
      if (!this.notes.wanted.has(id)) {
        this.skipDepth = 1;
        return;
      }
      this.noteId = id;
      this.stack.push({ kind: 'root', out: '' });
      return;
    }
    const frame = this.stack.at(-1);
    if (name === 'w:del') {
      // A deleted paragraph mark or table row, rather than deleted content.
      const grandparent = this.path.at(-3);
      if (parent === 'w:rPr' && grandparent === 'w:pPr' && frame?.kind === 'paragraph') frame.dropped = true;
      if (parent === 'w:trPr' && frame?.kind === 'row') frame.dropped = true;
    }
    if (SKIPPED.has(name)) {
      this.skipDepth = 1;
      return;
    }
    if (frame === undefined) return;
    switch (name) {
      case 'w:p':
        this.stack.push({ kind: 'paragraph', out: '', extra: '' });
        return;
      case 'w:tbl':
        this.stack.push({ kind: 'table', out: '' });
        return;
      case 'w:tr':
        this.stack.push({ kind: 'row', out: '' });
        return;
      case 'w:tc':
        this.stack.push({ kind: 'cell', out: '' });
        return;
      case 'w:t':
        this.inText = true;
        return;
    }
    if (frame.kind === 'paragraph' && this.path.at(-3) === 'w:pPr') {
      if (name === 'w:ilvl' && parent === 'w:numPr') frame.ilvl = attributes['w:val'];
      if (name === 'w:numId' && parent === 'w:numPr') frame.numId = attributes['w:val'];
    }
    if (name === 'w:pStyle' && parent === 'w:pPr' && frame.kind === 'paragraph') frame.style = attributes['w:val'];
    if (name === 'w:vMerge' && parent === 'w:tcPr' && frame.kind === 'cell') {
      const value = attributes['w:val'];
      if (value === undefined || value === 'continue') frame.dropped = true;
    }
    if (name === 'w:gridSpan' && parent === 'w:tcPr' && frame.kind === 'cell') {
      const span = Number(attributes['w:val']);
      // A span wider than any believable grid is damage, not a layout.
      if (Number.isInteger(span) && span > 1) frame.span = Math.min(span, 64);
    }
    if (parent !== 'w:r') return;
    switch (name) {
      case 'w:tab':
        this.appendInline('\t');
        break;
      case 'w:br': {
        // Page and column breaks are layout, not a break in the text.
        const type = attributes['w:type'];
        if (type === undefined || type === 'textWrapping') this.appendInline('<br />');
        break;
      }
      case 'w:noBreakHyphen':
        this.appendInline('\u2011');
        break;
      case 'w:softHyphen':
        this.appendInline('\u00ad');
        break;
      case 'w:footnoteReference':
      case 'w:endnoteReference':
        if (this.notes === undefined && attributes['w:id'] !== undefined) {
          this.references.push({ kind: name === 'w:footnoteReference' ? 'footnote' : 'endnote', id: attributes['w:id'] });
          this.appendInline(`<sup>[${this.references.length}]</sup>`);
        }
        break;
    }
  }

  private close(name: string): void {
    this.path.pop();
    if (this.skipDepth > 0) {
      this.skipDepth--;
      return;
    }
    switch (name) {
      case 'w:t':
        this.inText = false;
        return;
      case 'w:p':
        this.closeParagraph();
        return;
      case 'w:tc': {
        const cell = this.pop('cell');
        if (cell === undefined) return;
        closeList(cell);
        const row = this.stack.at(-1);
        if (row !== undefined) row.out += `<td>${cell.dropped ? '' : cell.out}</td>${'<td></td>'.repeat((cell.span ?? 1) - 1)}`;
        return;
      }
      case 'w:tr': {
        const row = this.pop('row');
        const table = this.stack.at(-1);
        if (row !== undefined && !row.dropped && table !== undefined) table.out += `<tr>${row.out}</tr>`;
        return;
      }
      case 'w:tbl': {
        const table = this.pop('table');
        if (table !== undefined) this.appendBlock(`<table>${table.out}</table>`);
        return;
      }
    }
    if (this.notes !== undefined && name === `w:${this.notes.kind}` && this.noteId !== undefined) {
      const root = this.stack.pop();
      if (root !== undefined) {
        closeList(root);
        this.notes.found(this.noteId, root.out);
      }
      this.noteId = undefined;
    }
  }

  /** Pops the top frame if it is of `kind` (a stray end tag in damaged XML pops nothing). */
  private pop(kind: Frame['kind']): Frame | undefined {
    return this.stack.at(-1)?.kind === kind ? this.stack.pop() : undefined;
  }

  private appendInline(html: string): void {
    for (let i = this.stack.length - 1; i >= 0; i--) {
      const frame = this.stack[i] as Frame;
      if (frame.kind === 'paragraph') {
        frame.out += html;
        return;
      }
    }
  }

  private closeParagraph(): void {
    const paragraph = this.pop('paragraph');
    if (paragraph === undefined) return;
    if (paragraph.dropped) {
      this.carried += paragraph.out;
      if (paragraph.extra) this.appendBlock(paragraph.extra);
      return;
    }
    const content = this.carried + paragraph.out;
    this.carried = '';
    if (content !== '') {
      const styleName = paragraph.style === undefined ? undefined : this.styles.paragraphNames.get(paragraph.style);
      const heading = headingLevel(paragraph.style, styleName);
      const list = heading === undefined ? this.listLevel(paragraph) : undefined;
      if (heading !== undefined) this.appendBlock(`<h${heading}>${content}</h${heading}>`);
      else if (list !== undefined) this.appendListItem(list.ordered ? 'ol' : 'ul', `<li>${content}</li>`);
      else this.appendBlock(`<p>${content}</p>`);
    }
    if (paragraph.extra) this.appendBlock(paragraph.extra);
  }

  private listLevel(paragraph: Frame): Level | undefined {
    const { numId, ilvl, style } = paragraph;
    if (numId !== undefined && ilvl !== undefined) return findLevel(this.numbering, this.styles, numId, ilvl);
    const byStyle = style === undefined ? undefined : this.numbering.byParagraphStyle.get(style);
    if (byStyle !== undefined) return byStyle;
    return numId === undefined ? undefined : findLevel(this.numbering, this.styles, numId, '0');
  }

  /** A block goes after the paragraph that holds it (a text box), or into the enclosing cell or document. */
  private appendBlock(html: string): void {
    const parent = this.stack.at(-1);
    if (parent === undefined) return;
    if (parent.kind === 'paragraph') {
      parent.extra += html;
      return;
    }
    closeList(parent);
    parent.out += html;
  }

  private appendListItem(kind: 'ul' | 'ol', html: string): void {
    const parent = this.stack.at(-1);
    if (parent === undefined) return;
    if (parent.kind === 'paragraph') {
      parent.extra += `<${kind}>${html}</${kind}>`;
      return;
    }
    if (parent.list !== kind) {
      closeList(parent);
      parent.out += `<${kind}>`;
      parent.list = kind;
    }
    parent.out += html;
  }
}

function closeList(frame: Frame): void {
  if (frame.list === undefined) return;
  frame.out += `</${frame.list}>`;
  frame.list = undefined;
}
