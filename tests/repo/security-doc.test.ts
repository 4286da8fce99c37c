// SECURITY.md's table of checks (design §23): every row is one sentence and cites at least one test
// file as `tests/<file>`; each cited file exists and declares tests, and a test name cited after a
// file (`tests/<file>`: `<test name>`) is a test of that file. SECURITY.md stays within 60 KB. Names
// are read from the test files by a small lexer (string and template literals after `test(` or
// `it(`); a name built by a template matches when the cited text fits the template with each
// `${…}` filled; `describe > test` names a test inside a describe of that name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface Citation {
  section: string;
  check: string;
  file: string;
  name: string;
}

/** The rows of the tables under "## Checks and the tests that prove them": each cited file and name. */
function citations(markdown: string): {
  rows: number;
  sections: string[];
  cited: Citation[];
  files: Citation[];
  checks: string[];
  empty: string[];
} {
  const start = markdown.indexOf('\n## Checks and the tests that prove them');
  assert.ok(start >= 0, 'SECURITY.md has the section "Checks and the tests that prove them"');
  const end = markdown.indexOf('\n## ', start + 1);
  const part = markdown.slice(start, end < 0 ? undefined : end);
  const cited: Citation[] = [];
  const files: Citation[] = [];
  const checks: string[] = [];
  const sections: string[] = [];
  const empty: string[] = [];
  let section = '';
  let rows = 0;
  for (const line of part.split('\n')) {
    if (line.startsWith('### ')) {
      section = line.slice(4).trim();
      sections.push(section);
      continue;
    }
    if (!line.startsWith('|') || /^\|\s*-/.test(line) || /^\|\s*Check\s*\|/.test(line)) continue;
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim());
    assert.equal(cells.length, 2, `a row has a check and its tests: ${line}`);
    rows++;
    const [check, tests] = cells as [string, string];
    checks.push(check);
    let file = '';
    let count = 0;
    for (const [, code] of tests.matchAll(/`([^`]+)`/g)) {
      const text = code!.replace(/\\\|/g, '|');
      if (/^tests\/.+\.ts$/.test(text)) {
        file = text;
        files.push({ section, check, file, name: '' });
        count++;
        continue;
      }
      assert.ok(file !== '', `${section} / ${check}: a test name before any file: ${text}`);
      cited.push({ section, check, file, name: text });
    }
    if (count === 0) empty.push(`${section} / ${check}`);
  }
  return { rows, sections, cited, files, checks, empty };
}

/** Unescapes a JavaScript string literal's body (what the test runner shows as the name). */
function unescapeCell(body: string): string {
  return body.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\s\S])/g, (_, code: string) => {
    if (code.startsWith('u{')) return String.fromCodePoint(parseInt(code.slice(2, -1), 16));
    if (code.length > 1 && (code[0] === 'u' || code[0] === 'x'))
      return String.fromCharCode(parseInt(code.slice(1), 16));
    return ({ n: '\n', t: '\t', r: '\r', '0': '\0' } as Record<string, string>)[code] ?? code;
  });
}

interface Declared {
  kind: 'test' | 'describe';
  name: string;
  template: RegExp | undefined;
  at: number;
  end: number;
}

/**
 * The tests and describes a file declares: `test(`, `it(` or `describe(` (also `test.skip(` and
 * the like) followed by a string or template literal. A describe's extent is found by matching
 * brackets from its opening parenthesis, in code with strings, templates and comments skipped.
 */
function declarations(source: string): Declared[] {
  const found: Declared[] = [];
  const head =
    /\b(test|it|describe)(?:\.\w+)?\(\s*(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`)/g;
  for (const match of source.matchAll(head)) {
    const kind = match[1] === 'describe' ? 'describe' : 'test';
    const raw = match[2] ?? match[3] ?? match[4]!;
    const isTemplate = match[4] !== undefined && raw.includes('${');
    let template: RegExp | undefined;
    let name = unescapeCell(raw);
    if (isTemplate) {
      const parts = raw.split(/\$\{(?:[^{}]|\{[^{}]*\})*\}/);
      template = new RegExp(
        `^${parts.map((part) => unescapeCell(part).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+?')}$`,
        's',
      );
      name = raw;
    }
    const open = match.index! + match[0].indexOf('(');
    found.push({
      kind,
      name,
      template,
      at: match.index!,
      end: kind === 'describe' ? closing(source, open) : match.index!,
    });
  }
  return found;
}

/** The offset of the parenthesis that closes the one at `open` (strings, templates and comments skipped). */
function closing(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i]!;
    if (c === '/' && source[i + 1] === '/') {
      i = source.indexOf('\n', i);
      if (i < 0) return source.length;
      continue;
    }
    if (c === '/' && source[i + 1] === '*') {
      i = source.indexOf('*/', i + 2) + 1;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      for (i++; i < source.length && source[i] !== c; i++) if (source[i] === '\\') i++;
      continue;
    }
    if (c === '(' || c === '{' || c === '[') depth++;
    if (c === ')' || c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return source.length;
}

const fits = (declared: Declared, name: string) => declared.name === name || (declared.template?.test(name) ?? false);

/** Whether `source` declares a test named `cited` (`describe > test` inside that describe). */
function declares(source: string, cited: string): boolean {
  const all = declarations(source);
  const tests = all.filter((d) => d.kind === 'test');
  const split = cited.indexOf(' > ');
  if (split < 0) return tests.some((d) => fits(d, cited));
  const [outer, inner] = [cited.slice(0, split), cited.slice(split + 3)];
  return all
    .filter((d) => d.kind === 'describe' && fits(d, outer))
    .some((d) => tests.some((t) => t.at > d.at && t.at < d.end && fits(t, inner)));
}

test('every test SECURITY.md cites exists: the file, a test in it, and a test of each name cited', () => {
  const { rows, cited, files, empty } = citations(read('SECURITY.md'));
  assert.ok(rows >= 150 && files.length >= rows, `${rows} rows, ${files.length} file citations`);
  assert.deepEqual(empty, [], 'every row cites a test file');
  const missingFiles = [...new Set(files.map((c) => c.file))].filter((file) => !existsSync(join(root, file)));
  assert.deepEqual(missingFiles, []);
  const testless = [...new Set(files.map((c) => c.file))].filter(
    (file) => !declarations(read(file)).some((declared) => declared.kind === 'test'),
  );
  assert.deepEqual(testless, [], 'every cited file declares tests');
  const sources = new Map<string, string>();
  const missing = cited
    .filter(({ file, name }) => {
      if (!sources.has(file)) sources.set(file, read(file));
      return !declares(sources.get(file)!, name);
    })
    .map(({ section, file, name }) => `${section}: ${file}: ${name}`);
  assert.deepEqual(missing, []);
});

test('SECURITY.md is the threat model and a table of checks within 60 KB, one sentence a row', () => {
  const markdown = read('SECURITY.md');
  const size = new TextEncoder().encode(markdown).length;
  assert.ok(size <= 60_000, `SECURITY.md is ${size} B`);
  assert.ok(markdown.includes('\n## Threat model\n'));
  const { checks } = citations(markdown);
  assert.deepEqual(
    checks.filter(
      (check) =>
        /[\w)`*]\. [A-Z`]/.test(check.replace(/^\d+\. /, '').replace(/\b(?:e\.g|i\.e|cf|vs)\. /g, '')) ||
        check.includes('<br>'),
    ),
    [],
    'a row says its check in one sentence',
  );
});

test('SECURITY.md has a table for the specification and for each section of the design from §2 to §24, and §26', () => {
  const { sections } = citations(read('SECURITY.md'));
  for (const n of [...Array.from({ length: 23 }, (_, i) => i + 2), 26])
    assert.ok(
      sections.some((s) => s.startsWith(`design §${n}:`)),
      `a table for design §${n}`,
    );
  for (const part of [
    'evaluation of the auth list',
    '`jwt()`',
    '`oidc()`',
    '`basic()`',
    '`apiToken()`',
    'errors and limits',
    'the principal in the run',
    'security rules',
  ]) {
    assert.ok(
      sections.some((s) => s.startsWith('Specification: ') && s.includes(part)),
      `a table for the specification's ${part}`,
    );
  }
});

test('the citation checker can fail: names that differ, templates that do not fit, describes that do not hold the test', () => {
  const source = [
    "test('plain name with a \\'quote\\'', () => {});",
    'test(`${name}: every vector passes`, () => {});',
    "describe('outer', () => {\n  test(`on ${runtime}`, () => {});\n});",
    "describe('other', () => { test('inner only here', () => {}); });",
    'it("an it with | a bar", () => {});',
  ].join('\n');
  assert.ok(declares(source, "plain name with a 'quote'"));
  assert.ok(declares(source, 'hmac_sha256_test.json: every vector passes'));
  assert.ok(declares(source, '${name}: every vector passes'));
  assert.ok(declares(source, 'outer > on Node'));
  assert.ok(declares(source, 'an it with | a bar'));
  assert.ok(!declares(source, 'plain name with a quote'));
  assert.ok(!declares(source, ': every vector passes'));
  assert.ok(!declares(source, 'every vector passes'));
  assert.ok(!declares(source, 'other > on Node'));
  assert.ok(!declares(source, 'outer > inner only here'));
  const table =
    '\n## Checks and the tests that prove them\n\n### design §2: x\n\n| Check | Test |\n| - | - |\n| A | `tests/a.test.ts`: `one` `two \\| three`<br>`tests/b.test.ts`: `four` |\n| B | none |\n| C | `tests/c.test.ts` |\n| D | `no-file` |\n';
  assert.throws(() => citations(table), /a test name before any file: no-file/);
  const read = citations(table.replace('| D | `no-file` |\n', ''));
  assert.deepEqual(
    read.cited.map((c) => `${c.file}: ${c.name}`),
    ['tests/a.test.ts: one', 'tests/a.test.ts: two | three', 'tests/b.test.ts: four'],
  );
  assert.deepEqual(
    read.files.map((c) => c.file),
    ['tests/a.test.ts', 'tests/b.test.ts', 'tests/c.test.ts'],
  );
  assert.deepEqual(read.empty, ['design §2: x / B']);
});
