// Project rules: zero production dependencies; src/auth, src/agent and src/http run on every
// runtime, src/worker runs inside the built Worker (no node: import, no process, no Buffer); relative imports carry the .ts extension.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importSpecifiers, nodeUsage } from './helpers/source-scan.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
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

test('nothing under src/auth, src/agent, src/http, src/postgres, src/worker imports node: (or any package) or uses process or Buffer', () => {
  const files = ['src/auth', 'src/agent', 'src/http', 'src/postgres', 'src/worker'].flatMap(sourceFiles);
  assert.ok(files.some((f) => f.startsWith('src/worker/')), 'the guard sees src/worker');
  assert.ok(files.some((f) => f.startsWith('src/auth/')), 'the guard sees src/auth');
  const problems = files.flatMap((file) => nodeUsage(read(file)).map((problem) => `${file}: ${problem}`));
  assert.deepEqual(problems, []);
});

test('every relative import in src/ uses the .ts extension', () => {
  const files = sourceFiles('src').filter((f) => f.endsWith('.ts'));
  const problems = files.flatMap((file) =>
    importSpecifiers(read(file))
      .filter((specifier) => (specifier.startsWith('./') || specifier.startsWith('../')) && !specifier.endsWith('.ts') && !specifier.endsWith('.json'))
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
    "const re = /[\"']/; const b = Buffer.alloc(1);",
  ];
  for (const source of flagged) assert.notDeepEqual(nodeUsage(source), [], source);
  const clean = [
    "// import fs from 'node:fs'; process.exit(); Buffer.from('')",
    "/* process.env */ const a = 1;",
    "const message = 'process the request with a Buffer';",
    'const help = `import fs from "node:fs" in ${name}`;',
    "const re = /process|Buffer/g; const quote = /[\"\\\\]/g;",
    "const x = a / b / c; const s = 'ok';",
    "import { sha256 } from './constant-time.ts';",
    'const processed = 1; const myBuffer = 2; obj.processor();',
    "const host = Reflect.get(globalThis, 'process'); // feature detection, absent on Workers",
  ];
  for (const source of clean) assert.deepEqual(nodeUsage(source), [], source);
  assert.deepEqual(importSpecifiers("import a from './a';\nexport * from '../b.ts';\nconst c = await import('./c.js');\nconst t = `import d from './d'`;"), ['./a', '../b.ts', './c.js']);
});

test('the old name is gone (design §14): no file of src/, tests/, examples/, fixtures/, bin/, the README or package.json says it', () => {
  const oldName = ['agent', 'gate'].join(''); // spelled apart, so this file does not hold it
  const files = ['src', 'tests', 'examples', 'fixtures', 'bin', 'scripts', 'bench'].flatMap(sourceFiles).concat(['README.md', 'CONTRIBUTING.md', 'package.json']);
  assert.ok(files.length > 100);
  assert.deepEqual(files.filter((file) => read(file).toLowerCase().includes(oldName)), []);
});
