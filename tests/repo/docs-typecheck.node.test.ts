// Every TypeScript block of the README and of the task pages under docs/ type-checks under `strict`,
// as a user copies it: each block is a module of its own in a project inside the repository (so the
// dev dependencies resolve, and `agentward/*` resolves to src/ as in tsconfig.json), and the
// repository's tsc checks them all at once. A block whose first line is `// <file>.ts` is written
// under that name, so the blocks of one recipe import each other (a name seen before on the page
// starts the next recipe, in a folder of its own). What the snippets take from the
// reader's own setup (a secret, the agent built above, an Express app) is declared once in PRELUDE;
// a library function is never declared there, so a block that uses one imports it. A block that
// cannot be checked is marked `<!-- docs-typecheck: skip (why) -->` on the line before its fence.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docPages } from '../helpers/docs.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** What the snippets take as given: values of the reader's setup, never a function of the library. */
const PRELUDE = `import type { Express } from 'express';
import type { FastifyInstance } from 'fastify';
import type { Agent, Model, Principal, Tool } from 'agentward';
import type { AuthOption } from 'agentward/auth';

declare global {
  // Secrets and settings of the reader's deployment.
  const ADA_PASSWORD: string;
  const AGENT_API_TOKEN: string;
  const JWT_SECRET: string;
  const CRM_SERVICE_TOKEN: string;
  const APP_CLIENT_ID: string;
  const issuer: string;
  const audience: string;
  const jwksUrl: string;
  const env: { readonly [name: string]: string };
  // What an earlier block or the reader's app made.
  const agent: Agent;
  const model: Model;
  const refund: Tool;
  const auth: AuthOption;
  const handler: (request: Request) => Promise<Response>;
  const principal: Principal;
  const reviewer: Principal;
  const id: string;
  const cursor: string | undefined;
  const app: Express;
  const fastify: FastifyInstance;
  // The runtimes' own globals, as far as the snippets use them.
  const Bun: { serve(options: { port?: number; fetch(request: Request): Response | Promise<Response> }): unknown };
  const Deno: { serve(options: { port?: number }, handler: (request: Request) => Response | Promise<Response>): unknown };
}
export {};
`;

/** A Next.js app's own module, which its route file imports by its alias. */
const NEXT_APP = `declare module '@/lib/agent' {
  export const agent: import('agentward').Agent;
  export const authList: import('agentward/auth').AuthOption;
}
`;

interface Block {
  page: string;
  line: number;
  language: 'ts' | 'tsx';
  code: string;
  skip: string | undefined;
  /** The recipe of its page the block belongs to: a block named as an earlier one of the page starts the next. */
  recipe: number;
}

/** The name a block's first line gives it (`// worker.ts`), if any. */
const nameOf = (code: string) => /^\/\/ ([\w/-]+\.tsx?)\n/.exec(code)?.[1];

/** The ts and tsx blocks of a markdown text. */
function blocks(page: string, markdown: string): Block[] {
  let recipe = 1;
  let named = new Set<string>();
  return [...markdown.matchAll(/^```(ts|tsx)\n([\s\S]*?)^```/gm)].map((match) => {
    const before = markdown.slice(0, match.index);
    const previous = before.trimEnd().split('\n').pop() ?? '';
    const name = nameOf(match[2]!);
    if (name !== undefined && named.has(name)) {
      recipe++;
      named = new Set();
    }
    if (name !== undefined) named.add(name);
    return {
      page,
      line: before.split('\n').length,
      language: match[1] as 'ts' | 'tsx',
      code: match[2]!,
      skip: /^<!-- docs-typecheck: skip \((.+)\) -->$/.exec(previous)?.[1],
      recipe,
    };
  });
}

const all = docPages().flatMap((page) => blocks(page, readFileSync(join(root, page), 'utf8')));

// Inside the repository, so node_modules resolve; .tmp/ is ignored by git.
mkdirSync(join(root, '.tmp'), { recursive: true });
const project = mkdtempSync(join(root, '.tmp', 'docs-typecheck-'));
after(() => rmSync(project, { recursive: true, force: true }));

/**
 * The file of a block: the name its first line gives, or one made of its page and line; in a folder
 * of its page and recipe (the blocks of one recipe import each other, a second `// worker.ts` of the
 * page is another recipe's).
 */
function fileOf(block: Block): string {
  const folder = block.page.replace(/\W/g, '_') + (block.recipe > 1 ? `_${block.recipe}` : '');
  return join(folder, nameOf(block.code) ?? `line-${block.line}.${block.language}`);
}

test('every TypeScript block of the README and the pages under docs/ type-checks under strict; the skips are few and say why', () => {
  assert.ok(all.length > 30, `${all.length} blocks`);
  const skipped = all.filter((block) => block.skip !== undefined);
  assert.ok(skipped.length <= 2, skipped.map((block) => `${block.page}:${block.line}`).join(', '));
  const checked = all.filter((block) => block.skip === undefined);
  const files = new Map<string, Block>();
  for (const block of checked) {
    const file = fileOf(block);
    assert.equal(files.has(file), false, `${block.page}:${block.line} and another block are both ${file}`);
    files.set(file, block);
    mkdirSync(dirname(join(project, file)), { recursive: true });
    // Each block a module of its own: names at its top level are its own.
    writeFileSync(join(project, file), `${block.code}\nexport {};\n`);
  }
  writeFileSync(join(project, 'prelude.d.ts'), PRELUDE);
  writeFileSync(join(project, 'next-app.d.ts'), NEXT_APP);
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'es2023',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['es2023', 'dom', 'dom.iterable'],
        types: ['node'],
        jsx: 'react-jsx',
        noEmit: true,
        allowImportingTsExtensions: true,
        skipLibCheck: true,
        paths: {
          agentward: ['../../src/index.ts'],
          'agentward/auth': ['../../src/auth/index.ts'],
          'agentward/node': ['../../src/node.ts'],
          'agentward/postgres': ['../../src/postgres/index.ts'],
          'agentward/cloudflare': ['../../src/cloudflare/index.ts'],
        },
      },
      // The repository's own declaration of cloudflare:workers, as tsconfig.json includes it.
      include: ['**/*.ts', '**/*.tsx', '../../types/*.d.ts'],
    }),
  );
  const tsc = spawnSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', project, '--pretty', 'false'], {
    encoding: 'utf8',
    timeout: 240_000,
  });
  // Each error named by the page and line of its block's source.
  const errors = `${tsc.stdout}${tsc.stderr}`
    .split('\n')
    .filter((line) => line.includes('error TS'))
    .map((line) => {
      const at = /^(.+?)\((\d+),\d+\): (.*)$/.exec(line);
      const file = at && [...files.keys()].find((name) => at[1]!.endsWith(name));
      if (!at || !file) return line;
      const block = files.get(file)!;
      return `${block.page}:${block.line + Number(at[2])}: ${at[3]}`;
    });
  assert.deepEqual(errors, []);
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
});

test('the type check can fail: a block with a wrong option is reported at its page and line', () => {
  const wrong = blocks('docs/x.md', "# x\n\n```ts\nimport { jwt } from 'agentward/auth';\njwt({ secret: 42 });\n```\n");
  assert.equal(wrong.length, 1);
  const folder = join(project, 'can-fail');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'wrong.ts'), `${wrong[0]!.code}\nexport {};\n`);
  writeFileSync(
    join(folder, 'tsconfig.json'),
    JSON.stringify({
      extends: '../tsconfig.json',
      include: ['wrong.ts', '../prelude.d.ts'],
    }),
  );
  const tsc = spawnSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', folder, '--pretty', 'false'], {
    encoding: 'utf8',
    timeout: 240_000,
  });
  assert.notEqual(tsc.status, 0);
  assert.match(tsc.stdout, /wrong\.ts\(2,\d+\): error TS2322/);
  const skipped = blocks('docs/x.md', '<!-- docs-typecheck: skip (needs React) -->\n```tsx\nx\n```\n');
  assert.equal(skipped[0]!.skip, 'needs React');
  const recipes = blocks('docs/x.md', '```ts\n// a.ts\n```\n```ts\n// b.ts\n```\n```ts\n// a.ts\n```\n');
  assert.deepEqual(
    recipes.map((block) => fileOf(block)),
    [join('docs_x_md', 'a.ts'), join('docs_x_md', 'b.ts'), join('docs_x_md_2', 'a.ts')],
  );
});
