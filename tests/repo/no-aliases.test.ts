// Design §38: src/ calls built-ins by their own names. An alias of a built-in (`isArray` for
// `Array.isArray`, `freeze` for `Object.freeze`, an `isString` that is `typeof x === 'string'`)
// saved bytes before gzip and cost the reader a look-up; a merge that brings one back fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scanSource } from '../helpers/source-scan.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The names the aliases went by. Each is a built-in or a single `typeof` test under another
 * name; a guard that does more (`isRecord`: an object and not an array; `isPlainObject`: the
 * prototype too) is not in the list.
 */
const ALIAS_NAMES = [
  'isArray', // Array.isArray
  'freeze', // Object.freeze
  'isInteger', // Number.isInteger
  'isSafeInteger', // Number.isSafeInteger
  'isFinite', // Number.isFinite
  'keys', // Object.keys
  'entries', // Object.entries
  'hasOwn', // Object.hasOwn
  'isString', // typeof x === 'string'
  'isObject', // typeof x === 'object' && x !== null
  'isFunction', // typeof x === 'function'
  'isBoolean', // typeof x === 'boolean'
] as const;

/** Names that are also ordinary local variables (`const keys = …`): only their binding to a built-in is an alias. */
const ALSO_VARIABLES = new Set(['keys', 'entries']);

const BUILT_IN = '(?:Object|Array|Number|String|Reflect|JSON|Math|Promise|Symbol)';

/** Where `source` defines or imports an alias of a built-in: one line per finding. */
export function aliasesIn(source: string): string[] {
  const { code } = scanSource(source);
  const found: string[] = [];
  // Any name bound to a built-in function itself, not to what it returns: `const f = Object.freeze;`.
  for (const match of code.matchAll(
    new RegExp(`\\b(?:const|let|var)\\s+([\\w$]+)\\s*(?::[^=;]+)?=\\s*${BUILT_IN}\\.([a-z][\\w$]*)\\s*(?:;|$)`, 'gm'),
  ))
    found.push(`${match[1]} aliases ${/=\s*(\w+)\./.exec(match[0])?.[1]}.${match[2]}`);
  // A destructured built-in: `const { keys, freeze } = Object;`.
  for (const match of code.matchAll(new RegExp(`\\b(?:const|let|var)\\s*\\{([^}]*)\\}\\s*=\\s*${BUILT_IN}\\s*;`, 'g')))
    found.push(`{${(match[1] ?? '').trim()}} destructures a built-in`);
  for (const name of ALIAS_NAMES) {
    if (!ALSO_VARIABLES.has(name))
      for (const _ of code.matchAll(new RegExp(`\\b(?:const|let|var|function)\\s+${name}\\b`, 'g')))
        found.push(`defines ${name}`);
  }
  // An import of one of the names, from anywhere.
  const names = new RegExp(`^(?:${ALIAS_NAMES.join('|')})$`);
  for (const match of code.matchAll(/\bimport\s*(?:type\s*)?\{([^}]*)\}\s*from\b/g))
    for (const specifier of (match[1] ?? '').split(',')) {
      const imported = specifier.trim().split(/\s+as\s+/)[0] ?? '';
      if (names.test(imported)) found.push(`imports ${imported}`);
    }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(?:ts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

test('no file of src/ defines or imports an alias of a built-in: it calls Array.isArray, Object.freeze, typeof… itself (design §38)', () => {
  const files = sourceFiles('src');
  assert.ok(files.length > 100, 'the guard sees src/');
  const problems = files.flatMap((file) =>
    aliasesIn(readFileSync(join(root, file), 'utf8')).map((problem) => `${file}: ${problem}`),
  );
  assert.deepEqual(problems, []);
});

test('the alias guard can fail: it sees each way an alias was written, and not a guard that does more', () => {
  assert.deepEqual(aliasesIn('export const isArray = Array.isArray;\n'), [
    'isArray aliases Array.isArray',
    'defines isArray',
  ]);
  assert.deepEqual(aliasesIn('export const freeze: typeof Object.freeze = Object.freeze;\n'), [
    'freeze aliases Object.freeze',
    'defines freeze',
  ]);
  assert.deepEqual(aliasesIn('const own = Object.hasOwn;\n'), ['own aliases Object.hasOwn']);
  assert.deepEqual(aliasesIn('const { keys, hasOwn } = Object;\n'), ['{keys, hasOwn} destructures a built-in']);
  assert.deepEqual(
    aliasesIn("export const isString = (value: unknown): value is string => typeof value === 'string';\n"),
    ['defines isString'],
  );
  assert.deepEqual(aliasesIn("function isObject(value) { return typeof value === 'object' && value !== null; }\n"), [
    'defines isObject',
  ]);
  assert.deepEqual(aliasesIn("import { freeze, isRecord } from './jws/freeze.ts';\n"), ['imports freeze']);
  assert.deepEqual(aliasesIn("import {\n  isFunction as fn,\n  isBoolean,\n} from '../agent/shapes.ts';\n"), [
    'imports isFunction',
    'imports isBoolean',
  ]);
  assert.deepEqual(aliasesIn("import { hasOwn } from './own.ts';\n"), ['imports hasOwn']);
  // Not aliases: a guard that does more, a value a built-in returns, a constant, the words in comments and text.
  assert.deepEqual(
    aliasesIn(
      [
        "export const isRecord = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);",
        'const keys = Object.keys(record);',
        'const ANY = Number.MAX_SAFE_INTEGER;',
        '// const isArray = Array.isArray;',
        "const text = 'import { freeze } from x';",
      ].join('\n'),
    ),
    [],
  );
});
