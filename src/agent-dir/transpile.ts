import { AuthConfigError } from '../auth/internal.ts';
import nodeModule from 'node:module';
import { specifierStrings } from './source-scan.ts';

const TS_EXTENSIONS: Readonly<Record<string, string>> = { '.ts': '.js', '.mts': '.mjs', '.cts': '.cjs' };

/** The JavaScript name of a TypeScript file (`agent.ts` → `agent.js`); other names are unchanged. */
export function javaScriptName(name: string): string {
  const match = /\.[mc]?ts$/.exec(name);
  return match === null ? name : name.slice(0, match.index) + TS_EXTENSIONS[match[0]];
}

export function isTypeScript(name: string): boolean {
  return /\.[mc]?ts$/.test(name) && !/\.d\.[mc]?ts$/.test(name);
}

/**
 * Runs `fn` without Node's ExperimentalWarning about `stripTypeScriptTypes`: the build uses it
 * on purpose, and the warning would be printed on every `agentward build`. Other warnings pass.
 */
export function quietly<T>(fn: () => T): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning?.message;
    if (typeof text === 'string' && text.includes('stripTypeScriptTypes')) return;
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return fn();
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * Erases the types of a TypeScript module with Node's own type stripping, the same that runs
 * `agent.ts` from source: what `agentward start` runs, the build transpiles, and erasable
 * syntax only (no enums, no namespaces). Types become blanks, so line numbers stay.
 */
export function stripTypes(source: string, file: string): string {
  try {
    // Read at call time: Bun has no stripTypeScriptTypes, and agentward/node must still import there.
    return quietly(() => nodeModule.stripTypeScriptTypes(source, { mode: 'strip' }));
  } catch (error) {
    throw new AuthConfigError(`${file}: cannot be transpiled: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Rewrites each module specifier for which `rewrite` returns a new one: only the specifiers of
 * real imports and re-exports, found by a lexer, never the same text in a comment or a string.
 */
export function rewriteSpecifiers(code: string, rewrite: (specifier: string) => string | undefined): string {
  let rewritten = '';
  let copied = 0;
  for (const { at, value } of specifierStrings(code)) {
    const next = rewrite(value);
    if (next === undefined) continue;
    rewritten += code.slice(copied, at + 1) + next;
    copied = at + 1 + value.length;
  }
  return rewritten + code.slice(copied);
}

/** `./tools.ts` → `./tools.js`: a relative specifier of a TypeScript file names its transpiled file. */
export function javaScriptSpecifier(specifier: string): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const renamed = javaScriptName(specifier);
  return renamed === specifier ? undefined : renamed;
}

/** The package a bare specifier names (`@scope/pkg/sub` → `@scope/pkg`), or undefined for relative paths, URLs and Node built-ins. */
export function packageName(specifier: string): string | undefined {
  if (
    specifier === '' ||
    specifier.startsWith('.') ||
    specifier.startsWith('#') ||
    specifier.startsWith('/') ||
    /^[a-z][a-z0-9+.-]*:/i.test(specifier)
  )
    return undefined;
  if (nodeModule.isBuiltin(specifier)) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}
