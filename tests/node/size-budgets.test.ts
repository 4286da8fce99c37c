// Edge-bundle size budgets (design §23): what a Worker pays for the auth layer, built the way an edge
// deployment builds it (esbuild: bundle, minify, ESM, platform neutral) from the entry users import.
// kB are 1,024 bytes. A budget moves only with a note saying why; no check is weakened and no
// message made vaguer to meet one. Each size is printed (a diagnostic of its test), so a change that
// grows a bundle shows by how much.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { build } from 'esbuild';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const KB = 1024;

// src/auth as a user vendors it: the folder alone, without the repository's package.json, whose
// "sideEffects" lets a bundler drop whole unused modules. The vendored bundles must shake as well,
// so nothing at a module's top level may keep an unused module in (calls are marked /* @__PURE__ */).
const vendored = mkdtempSync(join(tmpdir(), 'agentward-size-'));
cpSync(join(root, 'src', 'auth'), join(vendored, 'src', 'auth'), { recursive: true });
after(() => rmSync(vendored, { recursive: true, force: true }));

/** The bytes of `entry` (a module at `at`, the repository root by default, that imports from src/), bundled and minified for the edge. */
async function bundleSize(entry: string, at = root): Promise<number> {
  const result = await build({
    stdin: { contents: entry, resolveDir: at, loader: 'ts', sourcefile: 'entry.ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.contents.length;
}

const report = (name: string, size: number, budget: number) =>
  `${name}: ${size} B (${(size / KB).toFixed(2)} kB) of ${budget / KB} kB, ${size <= budget ? `${budget - size} B to spare` : `${size - budget} B over`}`;

interface Bundle {
  name: string;
  entry: string;
  budget: number;
  /**
   * Why the budget is not met yet, when it is not: the budget's test then reports without failing
   * (node:test `todo`) and `ceiling`, the size reached, holds instead so that the bundle cannot grow.
   */
  gap?: { reason: string; ceiling: number };
}

const AUTH = './src/auth/index.ts';
// jwt() reaches its three key sources (secret, publicKey, jwksUrl) from one function, so each of its
// bundles carries the other two: PEM, X.509 and PKCS#1 reading and the key-set fetch for a secret,
// the secret and PEM reading for a key set. Built with only its own key source, jwt({ secret }) was
// 35,720 B and jwt({ jwksUrl }) 36,042 B. Meeting the budget needs the key sources imported apart,
// a change of the public API that is not made here.
const JWT_GAP = 'known gap: jwt() carries its other two key sources (4.6 to 4.9 kB); see the comment above';
const BUNDLES: Bundle[] = [
  {
    name: 'routeAuth([apiToken(t)])',
    budget: 10 * KB,
    entry: `import { routeAuth, apiToken } from '${AUTH}'; export default routeAuth([apiToken('abc')]);`,
  },
  {
    name: 'routeAuth([basic({ users })])',
    budget: 13 * KB,
    entry: `import { routeAuth, basic } from '${AUTH}'; export default routeAuth([basic({ users: { ada: 'secret' } })]);`,
  },
  {
    name: 'routeAuth([jwt({ secret, audience })])',
    budget: 36 * KB,
    entry: `import { routeAuth, jwt } from '${AUTH}'; export default routeAuth([jwt({ secret: 'a-secret-of-at-least-32-bytes-0123456789', audience: 'api' })]);`,
    gap: { reason: JWT_GAP, ceiling: 40 * KB },
  },
  {
    name: 'routeAuth([jwt({ jwksUrl, audience })])',
    budget: 36 * KB,
    entry: `import { routeAuth, jwt } from '${AUTH}'; export default routeAuth([jwt({ jwksUrl: 'https://id.example/jwks.json', audience: 'api' })]);`,
    gap: { reason: JWT_GAP, ceiling: 40 * KB },
  },
  {
    name: 'routeAuth([oidc({ issuer, audience })])',
    budget: 36 * KB,
    entry: `import { routeAuth, oidc } from '${AUTH}'; export default routeAuth([oidc({ issuer: 'https://id.example', audience: 'api' })]);`,
  },
  {
    // src/agent and src/http besides src/auth. Cut from 79,229 B to 74,699 B, the budget is still
    // 13 kB away: every handler carries its MCP route (9.1 kB), the limits (5.7 kB), the protected
    // resource document (3.3 kB) and the /ui stream (2.9 kB), and every agent the AI SDK adapter
    // (2.4 kB), whether or not the options use them, since agentHandler() and createAgent() reach
    // them from one function each. Meeting it needs those imported apart, a change of the public API
    // that is not made here.
    name: "agentHandler(createAgent({ name: 'a', model: echoModel() }), { auth: [apiToken('abc')] }) from src/index.ts",
    budget: 60 * KB,
    entry: `import { agentHandler, apiToken, createAgent, echoModel } from './src/index.ts'; export default agentHandler(createAgent({ name: 'a', model: echoModel() }), { auth: [apiToken('abc')] });`,
    gap: { reason: 'known gap: agentHandler() carries its MCP route, limits, resource document and /ui stream; see the comment above', ceiling: 73 * KB },
  },
];

for (const { name, entry, budget, gap } of BUNDLES) {
  test(`the edge bundle of ${name} stays within ${budget / KB} kB (design §23)`, gap === undefined ? {} : { todo: gap.reason }, async (t) => {
    const size = await bundleSize(entry);
    t.diagnostic(report(name, size, budget));
    assert.ok(size <= budget, report(name, size, budget));
    // Deterministic: the same sources give the same bytes, so sizes compare across runs.
    assert.equal(await bundleSize(entry), size);
  });
  if (gap !== undefined) {
    test(`the edge bundle of ${name} does not grow past ${gap.ceiling / KB} kB while its ${budget / KB} kB budget is open (design §23)`, async (t) => {
      const size = await bundleSize(entry);
      t.diagnostic(report(name, size, gap.ceiling));
      assert.ok(size <= gap.ceiling, report(name, size, gap.ceiling));
    });
  }
  if (entry.includes(AUTH)) {
    const limit = gap === undefined ? budget : gap.ceiling;
    test(`the edge bundle of ${name} from src/auth copied alone stays within ${limit / KB} kB too: no module is kept by its top level (design §23)`, async (t) => {
      const size = await bundleSize(entry, vendored);
      t.diagnostic(report(`${name}, vendored`, size, limit));
      assert.ok(size <= limit, report(`${name}, vendored`, size, limit));
    });
  }
}
