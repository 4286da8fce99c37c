import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { stripTypes } from '../agent-dir/transpile.ts';
import { BuildError } from './errors.ts';

/**
 * A bundler for agentward's own web-standard modules, so that the Workers target is one
 * self-contained file without a bundler dependency. It knows only the module syntax those
 * files use: named imports of relative files, `export function|class|const|let`, and
 * `export { a, b } from './x.ts'`. Each module becomes a function scope returning its
 * exports, in dependency order; anything else fails the build, naming the file.
 */

const IMPORT = /^import\s*\{([^}]*)\}\s*from\s*(['"])(\.{1,2}\/[^'"]+)\2\s*;?/gm;
const RE_EXPORT = /^export\s*\{([^}]*)\}\s*from\s*(['"])(\.{1,2}\/[^'"]+)\2\s*;?/gm;
const EXPORT_DECLARATION = /^export\s+((?:async\s+)?function\*?|class|const|let)\s+([A-Za-z_$][\w$]*)/gm;
const LEFTOVER = /^\s*(?:import|export)\b[^\n]*/m;

interface Binding {
  imported: string;
  local: string;
}

function parseBindings(list: string, file: string): Binding[] {
  return list
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => {
      const match = /^([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/.exec(part);
      if (match === null)
        throw new BuildError('BUILD_UNSUPPORTED', `${file}: cannot bundle the import or export of "${part}"`);
      return { imported: match[1] as string, local: match[2] ?? (match[1] as string) };
    });
}

const destructure = (bindings: Binding[]) =>
  `{ ${bindings.map(({ imported, local }) => (imported === local ? imported : `${imported}: ${local}`)).join(', ')} }`;

interface Module {
  file: string;
  body: string;
  exports: string[];
}

/** Bundles `entry` and the files it imports; returns the code and the name of the constant that holds the entry's exports. */
export async function bundleModules(entry: string): Promise<{ code: string; entryName: string }> {
  const modules = new Map<string, Module>();
  const names = new Map<string, string>();
  const visiting = new Set<string>();

  async function visit(file: string): Promise<string> {
    const known = names.get(file);
    if (known !== undefined) return known;
    if (visiting.has(file)) throw new BuildError('BUILD_UNSUPPORTED', `${file}: import cycle; cannot bundle`);
    visiting.add(file);
    // Run from the compiled package, a module ends with a source map comment naming a file the bundle does not ship.
    let body = stripTypes(await readFile(file, 'utf8'), file).replace(/^\/\/# sourceMappingURL=\S*\s*$/m, '');
    const exports: string[] = [];
    const dependencies = new Map<string, string>();
    const dependency = async (specifier: string) => {
      const path = resolve(dirname(file), specifier);
      const name = await visit(path);
      dependencies.set(path, name);
      return name;
    };
    // Collect first (replacement callbacks cannot await), then rewrite.
    for (const match of [...body.matchAll(IMPORT), ...body.matchAll(RE_EXPORT)]) await dependency(match[3] as string);
    const nameOf = (specifier: string) => dependencies.get(resolve(dirname(file), specifier)) as string;
    body = body.replace(IMPORT, (_, list: string, __, specifier: string) => {
      const bindings = parseBindings(list, file);
      return bindings.length === 0 ? '' : `const ${destructure(bindings)} = ${nameOf(specifier)};`;
    });
    body = body.replace(RE_EXPORT, (_, list: string, __, specifier: string) => {
      const bindings = parseBindings(list, file);
      exports.push(...bindings.map((binding) => binding.local));
      return `const ${destructure(bindings)} = ${nameOf(specifier)};`;
    });
    body = body.replace(EXPORT_DECLARATION, (_, kind: string, name: string) => {
      exports.push(name);
      return `${kind} ${name}`;
    });
    const leftover = LEFTOVER.exec(body);
    if (leftover !== null)
      throw new BuildError('BUILD_UNSUPPORTED', `${file}: cannot bundle this module syntax: ${leftover[0].trim()}`);
    visiting.delete(file);
    const name = `module${modules.size}`;
    modules.set(file, { file, body, exports });
    names.set(file, name);
    return name;
  }

  const entryName = await visit(resolve(entry));
  const code = [...modules.values()]
    .map((module) => {
      const name = names.get(module.file) as string;
      return `// ${module.file.split(/[\\/](?:src|dist)[\\/]/).pop()}\nconst ${name} = (() => {\n${module.body.trim()}\nreturn { ${module.exports.join(', ')} };\n})();\n`;
    })
    .join('\n');
  return { code, entryName };
}
