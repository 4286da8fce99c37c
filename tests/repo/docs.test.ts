// The decisions live in the repository (design §23): docs/design.md has the sections 1 to 34, 36 and 38,
// every `design §N` that code, tests or docs cite is a heading there, every `spec "<title>"` a
// title of its summary of the specification, and the repository's documents link only to files
// inside it that exist.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docPages, readDocs } from '../helpers/docs.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const design = read('docs/design.md');

function files(dir: string, pattern: RegExp): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return path === 'fixtures/vectors' ? [] : files(path, pattern);
    return pattern.test(entry.name) ? [path] : [];
  });
}

/** Where citations may appear: code, tests, benchmarks, scripts, examples, and the documents. */
const CITING = [
  ...['src', 'tests', 'bench', 'scripts', 'examples', 'fixtures'].flatMap((dir) =>
    files(dir, /\.(?:ts|mts|mjs|js|md)$/),
  ),
  ...docPages(),
  'CONTRIBUTING.md',
  'SECURITY.md',
  'CHANGELOG.md',
  'docs/design.md',
].filter((path) => existsSync(join(root, path)) && path !== 'tests/repo/docs.test.ts'); // this file cites wrong ones on purpose

/** The numbers of the `## N. Title` headings, in order. */
function sectionNumbers(markdown: string): number[] {
  return [...markdown.matchAll(/^## (\d+)\. \S/gm)].map(([, n]) => Number(n));
}

/**
 * The section numbers a text cites: `design §N` (any case), and each `§M` that continues the same
 * citation (`design §3, §12 and §13`, `design §2 (challenges) and §4`). In docs/design.md itself
 * every `§N` that no RFC or other document precedes is one of its own sections.
 */
function designCitations(text: string, ownDocument = false): number[] {
  const cited: number[] = [];
  const head = ownDocument ? /(?<![A-Z]+ \d+(?:-\d+)? )(?<!RFC \d+ )§(\d+)(?![\d.]*\d)/g : /\bdesign §(\d+)/gi;
  for (const match of text.matchAll(head)) {
    cited.push(Number(match[1]));
    if (ownDocument) continue;
    let rest = text.slice(match.index + match[0].length);
    for (;;) {
      const more = /^(?:[^\S\n]*\([^()\n]*\))?[^\S\n]*(?:,|and|&|–|-|to)[^\S\n]*§(\d+)\b/.exec(rest);
      if (!more) break;
      cited.push(Number(more[1]));
      rest = rest.slice(more[0].length);
    }
  }
  return cited;
}

test('docs/design.md has the sections 1 to 34, 36 and 38, numbered in order, each once', () => {
  assert.deepEqual(sectionNumbers(design), [...Array.from({ length: 34 }, (_, i) => i + 1), 36, 38]);
});

test('every design §N cited in src/, tests/, bench/, scripts/, examples/, the README and the docs is a section of docs/design.md', () => {
  const sections = new Set(sectionNumbers(design));
  assert.ok(CITING.length > 150 && CITING.includes('src/auth/jwt.ts') && CITING.includes('README.md'));
  let count = 0;
  const unresolved = CITING.flatMap((file) => {
    const cited = designCitations(read(file), file === 'docs/design.md');
    count += cited.length;
    return cited.filter((n) => !sections.has(n)).map((n) => `${file}: §${n}`);
  });
  assert.deepEqual(unresolved, []);
  assert.ok(count > 80, `${count} citations seen`);
});

test('every spec "<title>" cited in src/ and tests/ is a title of the specification summary of docs/design.md', () => {
  const summary = design.slice(design.indexOf('## The specification, in brief'), design.indexOf('\n## 1. '));
  const titles = new Set([...summary.matchAll(/^\*\*([^*]+?)\.?\*\*/gm)].map(([, title]) => title!));
  assert.ok(titles.has('jwt()') && titles.has('Evaluation of the auth list'), [...titles].join(', '));
  const unresolved = CITING.flatMap((file) =>
    [...read(file).matchAll(/\b[Ss]pec(?:ification)?(?:'s)? "([^"]+)"/g)]
      .map(([, title]) => title!)
      .filter((title) => !titles.has(title))
      .map((title) => `${file}: "${title}"`),
  );
  assert.deepEqual(unresolved, []);
});

test("the citation reader can fail: it reads lists and skips other documents' sections", () => {
  assert.deepEqual(designCitations('// The options (design §3, §12, §13, §15, §16).'), [3, 12, 13, 15, 16]);
  assert.deepEqual(designCitations('// Spec "Errors"; design §2 (challenges) and §4 (responses).'), [2, 4]);
  assert.deepEqual(designCitations('// Design §16, RFC 9449: every proof check of §4.3'), [16]);
  assert.deepEqual(designCitations('(RFC 9449 §4.3, §7.1) and design §99'), [99]);
  assert.deepEqual(designCitations('see §12 and RFC 8725 §3.1, SEC 2 §2.4', true), [12]);
  const sections = new Set(sectionNumbers(design));
  assert.equal(sections.has(99), false);
  assert.equal(sections.has(0), false);
});

/** Relative links of a markdown file: `[text](target)`, without the URL ones and anchors. */
function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, target]) => target!.split('#')[0]!)
    .filter((target) => target !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

test("the repository's documents link only to files inside it that exist", () => {
  const documents = CITING.filter((file) => file.endsWith('.md')).concat(files('fixtures/vectors', /\.md$/));
  assert.ok(
    documents.includes('docs/design.md') &&
      documents.includes('src/auth/README.md') &&
      documents.includes('fixtures/vectors/README.md'),
  );
  const broken = documents.flatMap((file) =>
    relativeLinks(read(file)).flatMap((target) => {
      const resolved = posix.normalize(posix.join(posix.dirname(file), target));
      if (resolved.startsWith('../') || resolved === '..') return [`${file}: ${target} leaves the repository`];
      return existsSync(join(root, resolved)) ? [] : [`${file}: ${target} does not exist`];
    }),
  );
  assert.deepEqual(broken, []);
});

test('the paths docs/design.md names in the repository exist', () => {
  const named = [...design.matchAll(/`((?:src|tests|fixtures|docs|scripts|bench)\/[\w./-]*)`/g)].map(
    ([, path]) => path!,
  );
  assert.ok(named.includes('src/auth/README.md') && named.includes('fixtures/vectors/'), named.join(' '));
  assert.deepEqual(
    named.filter((path) => !existsSync(join(root, path))),
    [],
  );
});

test('the README says that a principal mapper must set issuer when entries of several issuers share a list (design §20)', () => {
  const readme = readDocs().replace(/\s+/g, ' ');
  assert.match(
    readme,
    /when entries of several issuers share a list, a mapper must set `issuer`, or the same `id` from two issuers is one caller/,
  );
});

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`, `-1`… for a repeat. */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const outsideCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of outsideCode.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; found.has(anchor); n++) anchor = `${base}-${n}`;
    found.add(anchor);
  }
  return found;
}

test('every #anchor the README and the pages under docs/ link to is a heading of the page it names', () => {
  const pages = docPages();
  assert.ok(
    pages.includes('README.md') && pages.includes('docs/auth.md') && pages.includes('docs/limits.md'),
    pages.join(' '),
  );
  const broken = pages.flatMap((file) =>
    [...read(file).matchAll(/\]\(([^)\s]*)#([^)\s]+)\)/g)].flatMap(([, target, anchor]) => {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) return [];
      const page = target === '' ? file : posix.normalize(posix.join(posix.dirname(file), target!));
      if (!page.endsWith('.md') || !existsSync(join(root, page))) return [];
      return anchors(read(page)).has(anchor!) ? [] : [`${file}: ${target}#${anchor}`];
    }),
  );
  assert.deepEqual(broken, []);
  // The check can fail: a heading's anchor is found, a made-up one is not.
  assert.ok(anchors('## The `useChat` endpoint\n').has('the-usechat-endpoint'));
  assert.ok(anchors("### The AI SDK's tools, and remote MCP tools\n").has('the-ai-sdks-tools-and-remote-mcp-tools'));
  assert.equal(anchors('```sh\n# not a heading\n```\n').has('not-a-heading'), false);
});

test('the README is the guide, within 40 KB; it and docs/README.md link every task page under docs/', () => {
  const readme = read('README.md');
  assert.ok(
    new TextEncoder().encode(readme).length <= 40 * 1024,
    `README.md is ${new TextEncoder().encode(readme).length} B`,
  );
  for (const heading of ['## Install', '## First example', '## The auth list', '## Serving an agent', '## Deploy'])
    assert.ok(readme.includes(`\n${heading}\n`), heading);
  const index = read('docs/README.md');
  const pages = docPages().filter((page) => page.startsWith('docs/') && page !== 'docs/README.md');
  for (const page of [
    'docs/auth.md',
    'docs/agent.md',
    'docs/http.md',
    'docs/mcp.md',
    'docs/limits.md',
    'docs/tracing.md',
    'docs/workers.md',
    'docs/node.md',
    'docs/postgresql.md',
    'docs/cli.md',
    'docs/audit.md',
    'docs/tenants.md',
  ])
    assert.ok(pages.includes(page), `${page} exists`);
  for (const page of pages) {
    assert.ok(readme.includes(`](${page})`), `the README links ${page}`);
    assert.ok(index.includes(`](${page.slice('docs/'.length)})`), `docs/README.md links ${page}`);
  }
});

test('CHANGELOG.md keeps Keep a Changelog sections, dates released versions, marks breaking changes and keeps bullets short', () => {
  const changelog = read('CHANGELOG.md');
  const versions = [...changelog.matchAll(/^## (.+)$/gm)].map(([, heading]) => heading!);
  assert.equal(versions[0], '[Unreleased]');
  assert.ok(versions.length > 1);
  for (const version of versions.slice(1)) assert.match(version, /^\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}$/, version);
  const sections = [...changelog.matchAll(/^### (.+)$/gm)].map(([, heading]) => heading!);
  assert.deepEqual(
    sections.filter((section) => !['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'].includes(section)),
    [],
  );
  const bullets = changelog.split(/\n(?=- |#|\n)/).filter((part) => part.startsWith('- '));
  assert.ok(bullets.length > 20);
  assert.deepEqual(
    bullets.filter((bullet) => bullet.trim().split('\n').length > 3),
    [],
    'a bullet is at most three lines',
  );
  assert.match(changelog, /^- \*\*BREAKING\*\*: `GET <base>\/spec`/m);
});
