// Layers only point down (design §30): every import under src/ goes to its own folder or to a
// floor beneath it; outside src/auth, auth is reached only through its two doors; src/auth/jws
// imports nothing of the rest of auth. The floors are written out here by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The floor of a file of src/, lowest first; a folder's siblings share a floor and may not import each other. */
const FLOORS: readonly (readonly string[])[] = [
  ['auth/jws'],
  ['auth'],
  ['agent'],
  ['http'],
  ['node', 'postgres', 'cloudflare'],
  ['agent-dir'],
  ['targets'],
  ['cli'],
];
/** The package's faces: files directly in src/ (agentward, agentward/node), above every floor. */
const FACES = FLOORS.length;

/** The folder of `file` (a path relative to src/) that names its floor, and the floor's number. */
export function floorOf(file: string): { folder: string; floor: number } {
  for (let floor = 0; floor < FLOORS.length; floor++) {
    for (const folder of FLOORS[floor]!) if (file.startsWith(`${folder}/`)) return { folder, floor };
  }
  if (!file.includes('/')) return { folder: '', floor: FACES };
  throw new Error(`${file}: a folder of src/ that has no floor (add it to FLOORS)`);
}

/** The relative specifiers a source imports: static imports, re-exports and literal dynamic imports. */
export function importsOf(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const found = [
    ...code.matchAll(/(?:^|[\s;])(?:import|export)\b[^'"`;]*?\bfrom\s*(['"])([^'"]+)\1/g),
    ...code.matchAll(/(?:^|[\s;])import\s*(['"])([^'"]+)\1/g),
    ...code.matchAll(/\bimport\(\s*(['"])([^'"]+)\1\s*\)/g),
  ].map((match) => match[2]!);
  return found.filter((specifier) => specifier.startsWith('.'));
}

/** What is wrong with `file` (relative to src/) importing `target` (relative to src/), or `undefined`. */
export function arrowProblem(file: string, target: string): string | undefined {
  const from = floorOf(file);
  const to = floorOf(target);
  if (from.folder === to.folder) return undefined;
  if (to.floor > from.floor) return `points up (${to.folder || 'a face'} is above ${from.folder || 'a face'})`;
  if (to.floor === from.floor && to.floor !== FACES)
    return `points sideways (${from.folder} and ${to.folder} share a floor)`;
  const inAuth = (path: string) => path.startsWith('auth/');
  if (inAuth(target) && !inAuth(file) && target !== 'auth/index.ts' && target !== 'auth/internal.ts') {
    return 'reaches into src/auth past its doors (index.ts, internal.ts)';
  }
  return undefined;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

test('layers only point down: every import under src/ goes to its own folder or a floor beneath it; outside src/auth only index.ts and internal.ts of auth are imported; src/auth/jws imports nothing of the rest of auth (design §30)', () => {
  const files = sourceFiles('src');
  assert.ok(files.length > 80, `the test reads src/ (${files.length} files)`);
  const problems: string[] = [];
  let arrows = 0;
  for (const path of files) {
    const file = path.slice('src/'.length);
    for (const specifier of importsOf(readFileSync(join(root, path), 'utf8'))) {
      const target = relative('src', normalize(join(dirname(path), specifier)))
        .split('\\')
        .join('/');
      if (target.startsWith('..')) continue; // outside src/: the guards test of src/auth sees those
      arrows++;
      const problem = arrowProblem(file, target);
      if (problem !== undefined) problems.push(`src/${file} -> src/${target}: ${problem}`);
    }
  }
  assert.ok(arrows > 300, `the test reads the imports (${arrows} arrows)`);
  assert.deepEqual(problems, []);
});

test('the layer check can fail: an arrow up, sideways, past the doors of auth or out of src/auth/jws is named', () => {
  assert.match(arrowProblem('auth/jwt.ts', 'agent/types.ts') ?? '', /points up/);
  assert.match(arrowProblem('node/index.ts', 'targets/build.ts') ?? '', /points up/);
  assert.match(arrowProblem('postgres/store.ts', 'node/server.ts') ?? '', /sideways/);
  assert.match(arrowProblem('http/handler.ts', 'auth/route-auth.ts') ?? '', /past its doors/);
  // src/auth/jws is a floor beneath the rest of auth: an import out of it points up.
  assert.match(arrowProblem('auth/jws/verify.ts', 'auth/refusals.ts') ?? '', /points up \(auth is above auth\/jws\)/);
  assert.equal(arrowProblem('http/handler.ts', 'auth/internal.ts'), undefined);
  assert.equal(arrowProblem('node.ts', 'targets/build.ts'), undefined);
  assert.equal(arrowProblem('auth/jwt.ts', 'auth/jws/verify.ts'), undefined);
  assert.deepEqual(
    importsOf(
      "import { a } from './a.ts';\nexport { b } from '../b.ts';\nconst c = await import('./c.ts');\nimport './d.ts';\n// import { e } from './e.ts';",
    ),
    ['./a.ts', '../b.ts', './d.ts', './c.ts'],
  );
  assert.throws(() => floorOf('elsewhere/x.ts'), /has no floor/);
});
