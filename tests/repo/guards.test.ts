// Project rules: zero production dependencies; src/auth, src/agent and src/http run on every
// runtime, src/cloudflare runs inside the built Worker (no node: import, no process, no Buffer); relative imports carry the .ts extension.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importSpecifiers, nodeUsage, scanSource } from '../helpers/source-scan.ts';
import { specifierStrings } from '../../src/agent-dir/source-scan.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;

function sourceFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return SOURCE.test(entry.name) ? [path] : [];
  });
}
const read = (path: string) => readFileSync(join(root, path), 'utf8');

test('package.json has no dependencies (production code has zero dependencies)', () => {
  const pkg = JSON.parse(read('package.json')) as { dependencies?: Record<string, string> };
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}), []);
});

test('nothing under src/auth, src/agent, src/http, src/postgres, src/cloudflare imports node: (or any package) or uses process or Buffer', () => {
  const files = ['src/auth', 'src/agent', 'src/http', 'src/postgres', 'src/cloudflare'].flatMap(sourceFiles);
  assert.ok(
    files.some((f) => f.startsWith('src/cloudflare/')),
    'the guard sees src/cloudflare',
  );
  assert.ok(
    files.some((f) => f.startsWith('src/auth/')),
    'the guard sees src/auth',
  );
  // One exception: the Durable Object classes extend the Workers runtime's own `DurableObject`.
  const runtimeModule =
    'src/cloudflare/objects.ts: imports the package cloudflare:workers (production code has no dependencies)';
  const problems = files.flatMap((file) => nodeUsage(read(file)).map((problem) => `${file}: ${problem}`));
  assert.deepEqual(
    problems.filter((problem) => problem !== runtimeModule),
    [],
  );
});

test('only src/cloudflare/objects.ts imports cloudflare:workers, and only agentward/cloudflare reaches it (the root and Node entries load outside workerd)', () => {
  const importers = sourceFiles('src').filter((file) =>
    importSpecifiers(read(file)).some((specifier) => specifier.startsWith('cloudflare:')),
  );
  assert.deepEqual(importers, ['src/cloudflare/objects.ts']);
  const reached = new Set<string>();
  const visit = (file: string) => {
    if (reached.has(file)) return;
    reached.add(file);
    for (const specifier of importSpecifiers(read(file)))
      if (specifier.startsWith('.')) visit(posix.join(posix.dirname(file), specifier));
  };
  for (const entry of ['src/index.ts', 'src/node.ts', 'src/auth/index.ts', 'src/postgres/index.ts']) visit(entry);
  assert.ok(reached.size > 50, `${reached.size} files reached from the entries`);
  assert.equal(reached.has('src/cloudflare/objects.ts'), false);
});

test('every relative import in src/ uses the .ts extension', () => {
  const files = sourceFiles('src').filter((f) => f.endsWith('.ts'));
  const problems = files.flatMap((file) =>
    importSpecifiers(read(file))
      .filter(
        (specifier) =>
          (specifier.startsWith('./') || specifier.startsWith('../')) &&
          !specifier.endsWith('.ts') &&
          !specifier.endsWith('.json'),
      )
      .map((specifier) => `${file}: ${specifier}`),
  );
  assert.deepEqual(problems, []);
});

test('the guards can fail: they see node: imports, process, Buffer and extension-less imports in code, not in comments or text', () => {
  const flagged = [
    "import { readFile } from 'node:fs/promises';",
    'import fs from "node:fs";',
    "export { x } from 'node:util';",
    "import 'node:process';",
    "const m = await import('node:crypto');",
    "const m = require('node:path');",
    "import { z } from 'zod';",
    "import {\n  createHash,\n} from 'crypto';",
    'const env = process.env.X;',
    'const b = Buffer.from(x);',
    'const p = globalThis.process;',
    'const t = `${process.env.X}`;',
    'const re = /["\']/; const b = Buffer.alloc(1);',
  ];
  for (const source of flagged) assert.notDeepEqual(nodeUsage(source), [], source);
  const clean = [
    "// import fs from 'node:fs'; process.exit(); Buffer.from('')",
    '/* process.env */ const a = 1;',
    "const message = 'process the request with a Buffer';",
    'const help = `import fs from "node:fs" in ${name}`;',
    'const re = /process|Buffer/g; const quote = /["\\\\]/g;',
    "const x = a / b / c; const s = 'ok';",
    "import { sha256 } from './sha256.ts';",
    'const processed = 1; const myBuffer = 2; obj.processor();',
    "const host = Reflect.get(globalThis, 'process'); // feature detection, absent on Workers",
  ];
  for (const source of clean) assert.deepEqual(nodeUsage(source), [], source);
  assert.deepEqual(
    importSpecifiers(
      "import a from './a';\nexport * from '../b.ts';\nconst c = await import('./c.js');\nconst t = `import d from './d'`;",
    ),
    ['./a', '../b.ts', './c.js'],
  );
});

test('the old name is gone (design §14): no file of src/, tests/, examples/, fixtures/, bin/, the README or package.json says it', () => {
  const oldName = ['agent', 'gate'].join(''); // spelled apart, so this file does not hold it
  const files = ['src', 'tests', 'examples', 'fixtures', 'bin', 'scripts', 'bench']
    .flatMap(sourceFiles)
    .concat(['README.md', 'CONTRIBUTING.md', 'package.json']);
  assert.ok(files.length > 100);
  assert.deepEqual(
    files.filter((file) => read(file).toLowerCase().includes(oldName)),
    [],
  );
});

/** Every file of the repository a reader or a test meets (not node_modules, not build output, not VCS). */
function repositoryFiles(dir = ''): string[] {
  const entries = readdirSync(join(root, dir), { withFileTypes: true });
  return entries.flatMap((entry) => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (['node_modules', 'dist', '.git'].includes(entry.name)) return [];
    if (entry.isDirectory()) return repositoryFiles(path);
    return entry.isFile() ? [path] : [];
  });
}

// Spelled in pieces, so that this file does not match itself.
const SHARED = ['sha', 'red'].join('');
const WORK = ['wo', 'rk'].join('');
const OUTSIDE_REFERENCE = new RegExp(
  [
    String.raw`(?:\.\.[\\/])+${SHARED}\b`, // the sibling folder, up one or more levels
    String.raw`['"]\.\.['"]\s*,\s*['"]${SHARED}['"]`, // the same, as path.join() segments
    String.raw`\b${SHARED}[\\/](?:design|protocols|spec|style|vectors|hooks)\b`, // a file of that folder, named without its parent
    String.raw`/${WORK}/`, // an absolute path of the machine the project was built on
  ].join('|'),
);

/** The lines of `text` that read or cite a file outside the repository. */
function outsideReferences(text: string): string[] {
  return text.split('\n').filter((line) => OUTSIDE_REFERENCE.test(line));
}

test('the repository stands alone (design §23): no file of it reads or cites a folder beside the repository or a file of the project notes outside it; the vectors are in fixtures/vectors', () => {
  const files = repositoryFiles().filter((file) => !/\.(?:png|jpe?g|gif|ico|woff2?)$/.test(file));
  for (const required of [
    'src/http/ui-stream.ts',
    'tests/helpers/jwt.ts',
    'tests/auth/jws/workerd.node.test.ts',
    'README.md',
    'CONTRIBUTING.md',
    'scripts/test.mjs',
    'bench/run.ts',
  ]) {
    assert.ok(files.includes(required), `the guard sees ${required}`);
  }
  const problems = files.flatMap((file) => outsideReferences(read(file)).map((line) => `${file}: ${line.trim()}`));
  assert.deepEqual(problems, []);
});

test('the stand-alone guard can fail: it sees the ways a file reaches outside the repository', () => {
  const up = '..';
  const flagged = [
    `export const VECTORS_DIR = new URL('${up}/${up}/${SHARED}/vectors/', import.meta.url);`,
    `const dir = join(root, '${up}', '${SHARED}', 'vectors');`,
    `// protocol notes: ${SHARED}/protocols/ai-sdk-ui-message-stream.md`,
    `See [the design](${up}/${SHARED}/design.md).`,
    `readFileSync('/${WORK}/${SHARED}/spec/route-auth.md')`,
  ];
  for (const line of flagged) assert.deepEqual(outsideReferences(line), [line], line);
  const clean = [
    "const dir = new URL('../../fixtures/vectors/', import.meta.url);",
    "createAgent({ sessions: 'shared' }); // the spec's default",
    'a shared key set, shared/owned sessions, the shared machine',
    'design §23: the kit a reviewer needs',
  ];
  for (const line of clean) assert.deepEqual(outsideReferences(line), [], line);
});

/**
 * Why `file` (a path under src/auth) reaches outside src/auth: a specifier of a static import, a
 * re-export, `import 'x'`, `import('x')` or `require('x')` that is a package, `node:`, a URL or a
 * relative path leaving the folder; or an `import(…)`/`require(…)` whose specifier is not a plain
 * string literal (it cannot be checked, so it is refused).
 */
function importsOutsideAuth(file: string, source: string): string[] {
  const folder = file.slice(0, file.lastIndexOf('/'));
  const problems: string[] = [];
  const specifiers = importSpecifiers(source);
  for (const specifier of specifiers) {
    if (!specifier.startsWith('./') && !specifier.startsWith('../')) {
      problems.push(`imports ${specifier}`);
      continue;
    }
    const resolved = posix.normalize(`${folder}/${specifier}`);
    if (!resolved.startsWith('src/auth/')) problems.push(`imports ${specifier} (${resolved})`);
  }
  // Every `import(` and `require(` in code must be one whose string-literal specifier was read above.
  const { code } = scanSource(source);
  const calls = [...code.matchAll(/(?<![\w$.])(?:import|require)\s*\(/g)].length;
  const literalCalls = specifierStrings(source).filter(({ at }) =>
    /(?:import|require)\s*\(\s*$/.test(code.slice(Math.max(0, at - 40), at)),
  ).length;
  if (calls !== literalCalls)
    problems.push(`${calls - literalCalls} import()/require() call(s) with a computed specifier`);
  return problems;
}

test('src/auth imports nothing outside itself: every import, re-export and dynamic import resolves inside src/auth (design §23)', () => {
  const files = sourceFiles('src/auth');
  assert.ok(
    files.length > 20 && files.some((file) => file.startsWith('src/auth/jws/')),
    'the guard sees src/auth and src/auth/jws',
  );
  const problems = files.flatMap((file) =>
    importsOutsideAuth(file, read(file)).map((problem) => `${file}: ${problem}`),
  );
  assert.deepEqual(problems, []);
  // And the folder's imports name files that exist.
  const missing = files.flatMap((file) =>
    importSpecifiers(read(file))
      .map((specifier) => posix.normalize(`${file.slice(0, file.lastIndexOf('/'))}/${specifier}`))
      .filter((target) => !sourceFiles(posix.dirname(target)).includes(target)),
  );
  assert.deepEqual(missing, []);
});

const SPDX_LINE = '// SPDX-License-Identifier: MIT';
/** Whether a file of src/auth opens with its licence line, the first line of the file, as vendored copies keep it. */
const opensWithSpdx = (source: string) => source.split('\n', 1)[0] === SPDX_LINE;

/** The lines of a source text, as an editor counts them (a final newline ends the last line). */
const lineCount = (source: string) => source.split('\n').length - (source.endsWith('\n') ? 1 : 0);

test('no file of src/auth is over 300 lines: each protocol reads as a unit in one sitting (design §23)', () => {
  const files = sourceFiles('src/auth').filter((file) => file.endsWith('.ts'));
  assert.ok(files.length > 20, 'the guard sees src/auth');
  assert.deepEqual(
    files.filter((file) => lineCount(read(file)) > 300).map((file) => `${file}: ${lineCount(read(file))} lines`),
    [],
  );
  // The count can fail: 301 lines are over, 300 are not, with or without a final newline.
  assert.equal(lineCount('x\n'.repeat(301)) > 300, true);
  assert.equal(lineCount('x\n'.repeat(300)) > 300, false);
  assert.equal(lineCount(`${'x\n'.repeat(299)}x`) > 300, false);
});

test('every file of src/auth starts with // SPDX-License-Identifier: MIT (design §23)', () => {
  const files = sourceFiles('src/auth').filter((file) => file.endsWith('.ts'));
  assert.ok(
    files.length > 20 && files.some((file) => file.startsWith('src/auth/jws/')),
    'the guard sees src/auth and src/auth/jws',
  );
  assert.deepEqual(
    files.filter((file) => !opensWithSpdx(read(file))),
    [],
  );
  // The check can fail: a missing line, one further down, another licence, a block comment.
  for (const source of [
    'export const x = 1;\n',
    `// A file.\n${SPDX_LINE}\n`,
    '// SPDX-License-Identifier: Apache-2.0\n',
    `/* ${SPDX_LINE.slice(3)} */\n`,
  ]) {
    assert.equal(opensWithSpdx(source), false, source);
  }
});

test('the src/auth guard can fail: it sees packages, node:, URLs, paths leaving the folder and computed dynamic imports', () => {
  const flagged: [string, string][] = [
    ['src/auth/jwt.ts', "import { VERSION } from '../version.ts';"],
    ['src/auth/jws/keys.ts', "import { x } from '../../agent/ids.ts';"],
    ['src/auth/jwt.ts', "export * from '../http/index.ts';"],
    ['src/auth/jwt.ts', "import 'node:crypto';"],
    ['src/auth/jwt.ts', "import { decodeJwt } from 'jose';"],
    ['src/auth/jwt.ts', "const m = await import('https://esm.sh/jose');"],
    ['src/auth/jwt.ts', "const m = await import('../agent/index.ts');"],
    ['src/auth/jwt.ts', 'const m = await import(`../${name}.ts`);'],
    ['src/auth/jwt.ts', 'const m = await import(name);'],
    ['src/auth/jwt.ts', "const m = require('../cli/main.ts');"],
  ];
  for (const [file, source] of flagged) assert.notDeepEqual(importsOutsideAuth(file, source), [], source);
  const clean: [string, string][] = [
    ['src/auth/jwt.ts', "import { AuthError } from './errors.ts';\nexport { jwt } from './jwt.ts';"],
    ['src/auth/jws/keys.ts', "import { readDer } from './der.ts';\nimport { AuthConfigError } from '../errors.ts';"],
    ['src/auth/jwt.ts', "const m = await import('./oidc.ts'); // import(name) in a comment"],
    ['src/auth/jwt.ts', "const text = 'import(name) or require(x)'; obj.import(x); const t = `${a}`;"],
  ];
  for (const [file, source] of clean) assert.deepEqual(importsOutsideAuth(file, source), [], source);
});
