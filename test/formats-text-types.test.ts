// Files that are text under another name: XML and its dialects, SVG, YAML, TOML, INI, TSV, logs and source
// files are indexed as text, whether their type comes from the file name, the bytes, or a declared type
// (servers label YAML, JavaScript or SQL with application/ types).
import t from 'tap';
import { detectContentType } from '../src/domain/ingest/detect.js';
import { extractDocument } from '../src/domain/ingest/extract.js';
import type { ExtractContext } from '../src/domain/ingest/types.js';

const PHRASE = 'harbour pilot schedule';

const context = (): ExtractContext => ({ ocr: false, maxPages: 100, deadline: Date.now() + 60_000 });

/** The phrase is in the extracted text, and some block's span holds it (so a passage can cite it). */
async function indexedAsText(bytes: Buffer, contentType: string): Promise<boolean> {
  const doc = await extractDocument(bytes, contentType, context());
  const at = doc.text.indexOf(PHRASE);
  return at >= 0 && doc.blocks.some((block) => block.charStart <= at && block.charEnd >= at + PHRASE.length);
}

/** A file of each kind, named with its usual extension. */
const BY_NAME: Readonly<Record<string, string>> = {
  'config.xml': `<?xml version="1.0" encoding="UTF-8"?>\n<config>\n  <note>${PHRASE}</note>\n</config>\n`,
  'pom.xml': `<project>\n  <description>${PHRASE}</description>\n</project>\n`,
  'chart.svg': `<svg xmlns="http://www.w3.org/2000/svg"><text x="1" y="9">${PHRASE}</text></svg>\n`,
  'feed.rss': `<?xml version="1.0"?>\n<rss version="2.0"><channel><title>${PHRASE}</title></channel></rss>\n`,
  'deploy.yaml': `service:\n  description: ${PHRASE}\n  replicas: 2\n`,
  'deploy.yml': `service:\n  description: ${PHRASE}\n`,
  'Cargo.toml': `[package]\ndescription = "${PHRASE}"\n`,
  'settings.ini': `[harbour]\nnote=${PHRASE}\n`,
  'table.tsv': `name\tnote\npier two\t${PHRASE}\n`,
  'server.log': `2026-01-01T10:00:00Z INFO ${PHRASE} loaded\n`,
  'build.gradle': `// ${PHRASE}\napply plugin: 'java'\n`,
  'query.sql': `-- ${PHRASE}\nSELECT 1;\n`,
  'run.sh': `#!/bin/sh\n# ${PHRASE}\necho ok\n`,
  'app.py': `def schedule():\n    return "${PHRASE}"\n`,
  'app.js': `export function schedule() {\n  return '${PHRASE}';\n}\n`,
  'main.go': `package main\n\nfunc schedule() string {\n\treturn "${PHRASE}"\n}\n`,
  'Main.java': `class Main {\n  String schedule() {\n    return "${PHRASE}";\n  }\n}\n`,
  'lib.rs': `fn schedule() -> &'static str {\n    "${PHRASE}"\n}\n`,
  'Makefile': `# ${PHRASE}\nall:\n\techo ok\n`,
};

for (const [name, source] of Object.entries(BY_NAME)) {
  t.test(`${name} is indexed as text, by its name and by its bytes alone`, async (t) => {
    const bytes = Buffer.from(source);
    const named = await detectContentType({ bytes, path: `/docs/${name}` });
    t.ok(await indexedAsText(bytes, named.contentType), `named ${name}: read as ${named.contentType}`);
    const unnamed = await detectContentType({ bytes, path: '/docs/unnamed', declared: 'application/octet-stream' });
    t.ok(await indexedAsText(bytes, unnamed.contentType), `no name, declared application/octet-stream: read as ${unnamed.contentType}`);
  });
}

/** Declared types of text files that do not start with text/. */
const DECLARED: readonly string[] = [
  'application/xml',
  'text/xml',
  'image/svg+xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/sql',
  'application/x-sh',
  'application/javascript',
  'application/x-httpd-php',
];

for (const declared of DECLARED) {
  t.test(`a file declared ${declared} is indexed as text`, async (t) => {
    const bytes = Buffer.from(`<!-- ${PHRASE} -->\n<a>${PHRASE}</a>\n`);
    const detected = await detectContentType({ bytes, path: '/docs/upload', declared });
    t.ok(await indexedAsText(bytes, detected.contentType), `read as ${detected.contentType}`);
  });
}
