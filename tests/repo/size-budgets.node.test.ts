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
  return (await bundle(entry, at)).length;
}

/** `entry` bundled and minified for the edge. */
async function bundle(entry: string, at = root): Promise<Uint8Array> {
  const result = await build({
    stdin: { contents: entry, resolveDir: at, loader: 'ts', sourcefile: 'entry.ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.contents;
}

const report = (name: string, size: number, budget: number) =>
  `${name}: ${size} B (${(size / KB).toFixed(2)} kB) of ${budget / KB} kB, ${size <= budget ? `${budget - size} B to spare` : `${size - budget} B over`}`;

interface Bundle {
  name: string;
  entry: string;
  budget: number;
}

const AUTH = './src/auth/index.ts';
// The budgets of docs/design.md §23's note for this round: jwt() reaches its three key sources from
// one function (the specification's single helper), so each of its bundles carries the other two
// (4.6 to 4.9 kB), and the handler carries its MCP route, limits, resource document and /ui stream
// whether or not its options use them. The 36 kB and 60 kB goals stay written in docs/design.md for
// when key sources and handler features can be imported apart. §29 moves the two jwt() budgets to
// 41 kB (docs/design.md §23's second note): DPoP nonces and scopeImplies, options read at run time.
// §32 moves them to 42 kB (built-in entries' grants, the deferred scope check) and the handler's to
// 95 kB (authorize(), the audit record, the named steps): docs/design.md §32's last note.
const BUNDLES: Bundle[] = [
  {
    name: 'routeAuth([apiToken(t)])',
    budget: 11 * KB,
    entry: `import { routeAuth, apiToken } from '${AUTH}'; export default routeAuth([apiToken('an-api-token-0123456789')]);`,
  },
  {
    name: 'routeAuth([basic({ users })])',
    budget: 13 * KB,
    entry: `import { routeAuth, basic } from '${AUTH}'; export default routeAuth([basic({ users: { ada: 'a-password-0123' } })]);`,
  },
  {
    name: 'routeAuth([jwt({ secret, audience })])',
    budget: 42 * KB,
    entry: `import { routeAuth, jwt } from '${AUTH}'; export default routeAuth([jwt({ secret: 'a-secret-of-at-least-32-bytes-0123456789', audience: 'api' })]);`,
  },
  {
    name: 'routeAuth([jwt({ jwksUrl, audience })])',
    budget: 42 * KB,
    entry: `import { routeAuth, jwt } from '${AUTH}'; export default routeAuth([jwt({ jwksUrl: 'https://id.example/jwks.json', audience: 'api' })]);`,
  },
  {
    name: 'routeAuth([oidc({ issuer, audience })])',
    budget: 40 * KB,
    entry: `import { routeAuth, oidc } from '${AUTH}'; export default routeAuth([oidc({ issuer: 'https://id.example', audience: 'api' })]);`,
  },
  {
    name: "agentHandler(createAgent({ name: 'a', model: echoModel() }), { auth: [apiToken(t)] }) from src/index.ts",
    budget: 95 * KB,
    entry: `import { agentHandler, apiToken, createAgent, echoModel } from './src/index.ts'; export default agentHandler(createAgent({ name: 'a', model: echoModel() }), { auth: [apiToken('an-api-token-0123456789')] });`,
  },
];

for (const { name, entry, budget } of BUNDLES) {
  test(`the edge bundle of ${name} stays within ${budget / KB} kB (design §23)`, async (t) => {
    const size = await bundleSize(entry);
    t.diagnostic(report(name, size, budget));
    assert.ok(size <= budget, report(name, size, budget));
    // Deterministic: the same sources give the same bytes, so sizes compare across runs.
    assert.equal(await bundleSize(entry), size);
  });
  if (entry.includes(AUTH)) {
    test(`the edge bundle of ${name} from src/auth copied alone stays within ${budget / KB} kB too: no module is kept by its top level (design §23)`, async (t) => {
      const size = await bundleSize(entry, vendored);
      t.diagnostic(report(`${name}, vendored`, size, budget));
      assert.ok(size <= budget, report(`${name}, vendored`, size, budget));
    });
  }
}

test('tokenExchange() stays out of every bundle above, the handler included, and of src/auth copied alone: only the hook that ties a token is there (design §27)', async () => {
  const marks = ['urn:ietf:params:oauth:grant-type:token-exchange', 'TokenExchangeError', 'client_assertion'];
  for (const { name, entry } of BUNDLES)
    for (const at of entry.includes(AUTH) ? [root, vendored] : [root]) {
      const text = new TextDecoder().decode(await bundle(entry, at));
      for (const mark of marks) assert.equal(text.includes(mark), false, `${name} holds ${mark}`);
    }
  // The check can fail: a bundle that uses it holds every mark.
  const used = new TextDecoder().decode(
    await bundle(
      `import { tokenExchange } from '${AUTH}'; export default tokenExchange({ tokenEndpoint: 'https://id.example/token', clientId: 'a', privateKey: {} as JsonWebKey });`,
    ),
  );
  for (const mark of marks) assert.ok(used.includes(mark), mark);
});
