// agentward as users install it: `npm pack` (prepack builds dist/), `npm install <tarball>` into a
// fresh project outside the repository, then everything on the installed copy: every entry on
// Node 22 (no flags), Bun and Deno; the README's first example on the three; a Worker bundled
// with esbuild and run in workerd; a strict type check of a consumer; the CLI through npx;
// publint and attw on the tarball. One pack and one install, shared by the tests.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertPlaygroundInlined } from '../helpers/build.ts';
import { bundleWorker, startWorker } from '../helpers/workerd.ts';
import { wireServer } from '../helpers/ai-sdk-wire.ts';
import { openAIChatWire } from '../helpers/provider-wires.ts';
import { stopGroup } from '../helpers/process-group.ts';
import { readDocs } from '../helpers/docs.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
const node22 = realpathSync(bin('node'));
/** PATH with Node 22 first: npx, npm and `#!/usr/bin/env node` scripts run on it, as on a user's machine with Node 22. */
const PATH = `${dirname(node22)}:${process.env.PATH ?? ''}`;
const TOKEN = 'package-test-token-0123456789';
const ADA_PASSWORD = 'correct horse battery staple';

let work = '';
let tarball = '';
let app = '';

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Ran {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, PATH, NO_COLOR: '1', ...env },
    timeout: 180_000,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function ok(command: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const result = run(command, args, cwd, env);
  assert.equal(
    result.status,
    0,
    `${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`,
  );
  return result.stdout;
}

const write = (file: string, text: string) => {
  mkdirSync(dirname(join(app, file)), { recursive: true });
  writeFileSync(join(app, file), text);
};

before(() => {
  work = mkdtempSync(join(tmpdir(), 'agentward-package-'));
  const packed = JSON.parse(ok('npm', ['pack', '--json', '--pack-destination', work], root)) as { filename: string }[];
  tarball = join(work, packed[0]!.filename);
  app = join(work, 'app');
  mkdirSync(app);
  // The project is made as the README's first example says: npm init -y (npm 11: "type": "commonjs"), then its npm pkg line.
  ok('npm', ['init', '-y'], app);
  for (const command of readmeProjectSetup()) ok('npm', command, app);
  ok('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], app);
});

/** The `npm …` lines of the README's "First example" set-up block, but `npm init` and the install (done here from the tarball). */
function readmeProjectSetup(): string[][] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## First example')))?.[1] ?? '';
  const lines = block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^npm (?!init|install)/.test(line));
  assert.deepEqual(lines, ['npm pkg set type=module'], 'the README\'s first example says to set "type": "module"');
  return lines.map((line) => line.split(/\s+/).slice(1));
}

after(() => rmSync(work, { recursive: true, force: true }));

describe('the packed tarball', () => {
  test('holds dist/, README.md, the pages of docs/, SECURITY.md, CHANGELOG.md, LICENSE and package.json only, and is installed as a real copy outside the repository', () => {
    const listing = ok('tar', ['-tzf', tarball], work)
      .trim()
      .split('\n')
      .map((line) => line.replace(/^package\//, ''));
    const pages = readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`);
    assert.ok(pages.includes('docs/auth.md') && pages.includes('docs/workers.md'), pages.join(' '));
    assert.deepEqual(
      listing.filter((path) => !path.startsWith('dist/')).sort(),
      ['CHANGELOG.md', 'LICENSE', 'README.md', 'SECURITY.md', ...pages, 'package.json'].sort(),
    );
    for (const file of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/index.js.map',
      'dist/auth/index.js',
      'dist/node.js',
      'dist/bin/agentward.js',
      'dist/node/playground/script.js',
      'dist/node/playground/styles.css',
    ]) {
      assert.ok(listing.includes(file), `${file} is in the tarball`);
    }
    assert.equal(
      listing.some((path) => path.endsWith('.ts') && !path.endsWith('.d.ts')),
      false,
      'no TypeScript source is shipped',
    );
    assert.equal(
      listing.includes('dist/node/playground/tsconfig.json'),
      false,
      'nor the tsconfig that checks the script',
    );
    const installed = join(app, 'node_modules', 'agentward');
    assert.equal(lstatSync(installed).isSymbolicLink(), false);
    assert.equal(realpathSync(installed).startsWith(root), false);
    const compiled = readFileSync(join(installed, 'dist', 'index.js'), 'utf8');
    assert.match(compiled, /from '\.\/auth\/index\.js'/, 'relative specifiers name .js files');
  });

  test('every source map in the tarball resolves: each source it names is in the tarball or in its sourcesContent (a stack trace names a file that exists)', () => {
    const installed = join(app, 'node_modules', 'agentward');
    const maps = ok('tar', ['-tzf', tarball], work)
      .trim()
      .split('\n')
      .map((line) => line.replace(/^package\//, ''))
      .filter((path) => path.endsWith('.map'));
    assert.ok(maps.length > 50, `${maps.length} maps`);
    const unresolved: string[] = [];
    for (const map of maps) {
      const { sources, sourcesContent } = JSON.parse(readFileSync(join(installed, map), 'utf8')) as {
        sources: string[];
        sourcesContent?: (string | null)[];
      };
      sources.forEach((source, i) => {
        const shipped = existsSync(join(installed, dirname(map), source));
        if (!shipped && typeof sourcesContent?.[i] !== 'string') unresolved.push(`${map}: ${source}`);
      });
    }
    assert.deepEqual(unresolved, []);
  });

  test('package.json names the repository, homepage and bug tracker; the README cites no file the package does not ship', () => {
    const installed = join(app, 'node_modules', 'agentward');
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.match((pkg.repository as { url?: string })?.url ?? '', /^git\+https:\/\/github\.com\//);
    assert.match(String(pkg.homepage), /^https:\/\//);
    assert.match((pkg.bugs as { url?: string })?.url ?? '', /^https:\/\//);
    const readme = readFileSync(join(installed, 'README.md'), 'utf8');
    // The user's manual: everything above the short note on working on the repository itself, and the task pages.
    const manual =
      readme.slice(0, readme.indexOf('## Working on this repository')) + readDocs(installed).slice(readme.length);
    assert.ok(manual.length > 1000);
    assert.deepEqual(
      [...manual.matchAll(/(?:examples|tests|src|bench|fixtures)\/[\w./-]+/g)].map((match) => match[0]),
      [],
    );
  });

  test('every relative link of the installed README and docs pages names a file the package ships', () => {
    const installed = join(app, 'node_modules', 'agentward');
    const shipped = new Set(
      ok('tar', ['-tzf', tarball], work)
        .trim()
        .split('\n')
        .map((line) => line.replace(/^package\//, '')),
    );
    const documents = ['README.md', ...[...shipped].filter((path) => /^docs\/[^/]+\.md$/.test(path))];
    let links = 0;
    const broken = documents.flatMap((file) =>
      [...readFileSync(join(installed, file), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
        .map(([, target]) => target!.split('#')[0]!)
        .filter((target) => target !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(target))
        .flatMap((target) => {
          links++;
          const resolved = posix.normalize(posix.join(posix.dirname(file), target));
          return shipped.has(resolved) ? [] : [`${file}: ${target}`];
        }),
    );
    assert.deepEqual(broken, []);
    assert.ok(links > 30, `${links} links`);
  });

  test('publint reports nothing', () => {
    const output = ok(node22, [bin('publint'), 'run', tarball, '--level', 'suggestion'], work);
    assert.match(output, /All good!/);
  });

  test('attw (ESM-only profile: the package is ESM only) reports no problem', () => {
    const output = ok(node22, [bin('attw'), tarball, '--profile', 'esm-only', '--format', 'ascii', '--no-color'], work);
    for (const entry of ['"agentward"', '"agentward/auth"', '"agentward/node"'])
      assert.ok(output.includes(entry), `attw checked ${entry}`);
    assert.doesNotMatch(output.replace(/\(ignored[^)]*\)[^\n]*/g, ''), /💀|⚠️|❌|Resolution failed/);
  });
});

/**
 * A module importing every entry point the installed package.json exports but agentward/cloudflare
 * (its Durable Object classes extend `cloudflare:workers`, which only workerd has: it is run there
 * below), printing the names each one exports.
 */
function entryCheck(): { source: string; entries: string[] } {
  const pkg = JSON.parse(readFileSync(join(app, 'node_modules', 'agentward', 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
  };
  const entries = Object.keys(pkg.exports)
    .filter((key) => key !== './package.json' && key !== './cloudflare')
    .map((key) => `agentward${key.slice(1)}`);
  const imports = entries.map((entry, i) => `import * as entry${i} from '${entry}';`).join('\n');
  const names = entries.map((entry, i) => `${JSON.stringify(entry)}: Object.keys(entry${i}).sort()`).join(', ');
  return { source: `${imports}\nconsole.log(JSON.stringify({ ${names} }));\n`, entries };
}

/** How to run a file of the consumer project on Node 22 (no flags), Bun and Deno. */
const runtimes = (file: string): [name: string, command: string, args: string[]][] => [
  ['Node 22 with no flags', node22, [file]],
  ['Bun', bin('bun'), [file]],
  ['Deno', bin('deno'), ['run', '-A', file]],
];

describe('every entry imports from the installed package', () => {
  for (const [name, command, args] of runtimes('entries.mjs')) {
    test(`on ${name}`, () => {
      const { source, entries } = entryCheck();
      assert.deepEqual(entries.slice(0, 3), ['agentward', 'agentward/auth', 'agentward/node']);
      write('entries.mjs', source);
      const exported = JSON.parse(ok(command, args, app)) as Record<string, string[]>;
      assert.deepEqual(Object.keys(exported), entries);
      for (const entry of entries) assert.ok(exported[entry]!.length > 0, `${entry} exports something`);
      const { agentward: rootNames, 'agentward/auth': auth, 'agentward/node': node } = exported;
      for (const name of [
        'routeAuth',
        'jwt',
        'oidc',
        'basic',
        'apiToken',
        'anonymous',
        'AuthError',
        'AuthConfigError',
      ]) {
        assert.ok(auth!.includes(name), `agentward/auth exports ${name}`);
        assert.ok(rootNames!.includes(name), `agentward re-exports ${name}`);
      }
      for (const name of ['createAgent', 'agentHandler', 'echoModel', 'memoryStore'])
        assert.ok(rootNames!.includes(name), `agentward exports ${name}`);
      for (const name of [
        'serve',
        'toNodeListener',
        'fileStore',
        'slackChannel',
        'discordChannel',
        'resolveAgentDir',
        'build',
      ]) {
        assert.ok(node!.includes(name), `agentward/node exports ${name}`);
      }
    });
  }
});

/** The first TypeScript block of the README's "First example", from the installed README. */
function readmeFirstExample(): string {
  const readme = readDocs(join(app, 'node_modules', 'agentward'));
  const section = readme.slice(readme.indexOf('## First example'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'the README has a "First example" with a ts block');
  return block[1]!;
}

const EXAMPLE_DRIVER = `
const basicHeader = 'Basic ' + btoa('ada:' + ADA_PASSWORD);
const answers = [];
for (const authorization of [undefined, basicHeader, 'Bearer ' + AGENT_API_TOKEN, 'Bearer wrong-token']) {
  const response = await handle(new Request('http://localhost/agent', { headers: authorization ? { authorization } : {} }));
  answers.push({ status: response.status, challenge: response.headers.get('www-authenticate'), body: await response.json() });
}
console.log(JSON.stringify(answers));
`;

describe("the README's first example runs from the installed package", () => {
  test('in a project made as the README says: npm init -y, whose "type": "commonjs" the README has set to "module"', () => {
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      type?: string;
      dependencies?: Record<string, string>;
    };
    assert.equal(pkg.type, 'module');
    assert.ok(pkg.dependencies?.agentward, 'agentward is a dependency of the project');
  });

  for (const [name, command, args] of runtimes('first-example.ts')) {
    test(`on ${name}`, () => {
      const prelude = `const ADA_PASSWORD = ${JSON.stringify(ADA_PASSWORD)};\nconst AGENT_API_TOKEN = ${JSON.stringify(TOKEN)};\n`;
      write('first-example.ts', prelude + readmeFirstExample() + EXAMPLE_DRIVER);
      const answers = JSON.parse(ok(command, args, app).trim().split('\n').pop()!) as {
        status: number;
        challenge: string | null;
        body: Record<string, unknown>;
      }[];
      assert.equal(answers[0]!.status, 401);
      assert.equal(answers[0]!.challenge, 'Basic realm="agent", charset="UTF-8", Bearer');
      assert.deepEqual(answers[1], { status: 200, challenge: null, body: { hello: 'ada', via: 'basic' } });
      assert.deepEqual(answers[2], { status: 200, challenge: null, body: { hello: 'ci-bot', via: 'api-token' } });
      assert.equal(answers[3]!.status, 401);
    });
  }
});

/** The first TypeScript block of the README's MCP section (metadata, scopes, step-up, DPoP), from the installed README. */
function readmeMcpExample(): string {
  const readme = readDocs(join(app, 'node_modules', 'agentward'));
  const section = readme.slice(readme.indexOf('### MCP and other OAuth clients'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'the README has an MCP section with a ts block');
  return block[1]!;
}

const MCP_DRIVER = `
const document = await handler(new Request('https://agent.example.com/.well-known/oauth-protected-resource/agent'));
const refused = await handler(new Request('https://agent.example.com/agent', { method: 'POST', body: '{"message":"hi"}' }));
const wrong = await handler(new Request('https://agent.example.com/agent', { method: 'POST', body: '{"message":"hi"}', headers: { authorization: 'Bearer not-a-token' } }));
console.log(JSON.stringify({
  document: { status: document.status, body: await document.json() },
  refused: { status: refused.status, challenge: refused.headers.get('www-authenticate') },
  wrong: { status: wrong.status, challenge: wrong.headers.get('www-authenticate') },
}));
`;

describe("the README's MCP setup runs from the installed package: the document, the challenges with scope and DPoP", () => {
  for (const [name, command, args] of runtimes('mcp-example.ts')) {
    test(`on ${name}`, () => {
      write('mcp-example.ts', readmeMcpExample() + MCP_DRIVER);
      const out = JSON.parse(ok(command, args, app).trim().split('\n').pop()!) as Record<
        string,
        { status: number; challenge?: string; body?: Record<string, unknown> }
      >;
      const url = 'https://agent.example.com/.well-known/oauth-protected-resource/agent';
      assert.deepEqual(out.document, {
        status: 200,
        body: {
          resource: 'https://agent.example.com/agent',
          authorization_servers: ['https://id.example.com'],
          scopes_supported: ['agent:chat', 'agent:approve'],
          // The entries' list, the one the 401's DPoP algs names (design §20).
          bearer_methods_supported: ['header'],
          dpop_signing_alg_values_supported: ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'],
        },
      });
      const dpop = `DPoP algs="ES256 EdDSA Ed25519 RS256 PS256", resource_metadata="${url}", scope="agent:chat"`;
      assert.deepEqual(out.refused, {
        status: 401,
        challenge: `Bearer resource_metadata="${url}", scope="agent:chat", ${dpop}`,
      });
      assert.deepEqual(out.wrong, {
        status: 401,
        challenge: `Bearer error="invalid_token", resource_metadata="${url}", scope="agent:chat", ${dpop}`,
      });
    });
  }
});

/** The first ts block of the README's "Serving the agent over MCP", from the installed README. */
function readmeMcpServing(): string {
  const readme = readDocs(join(app, 'node_modules', 'agentward'));
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Serving the agent over MCP')));
  assert.ok(block, 'the README has a ts block serving the agent over MCP');
  return `const AGENT_API_TOKEN = 'readme-token-0123456789';\n${block[1]!.replace(/^export /gm, '')}`;
}

const MCP_SERVING_DRIVER = `
const call = async (body: unknown, authorization?: string) => {
  const response = await handler(new Request('https://agent.example.com/agent/mcp', { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization && { authorization }) }, body: JSON.stringify(body) }));
  return { status: response.status, body: response.status === 200 ? await response.json() : undefined };
};
const refused = await call({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const init = await call({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'readme', version: '1' } } }, 'Bearer ' + AGENT_API_TOKEN);
const tools = await call({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, 'Bearer ' + AGENT_API_TOKEN);
const asked = await call({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'ask', arguments: { message: 'hello' } } }, 'Bearer ' + AGENT_API_TOKEN);
console.log(JSON.stringify({ refused: refused.status, server: init.body.result.serverInfo, tools: tools.body.result.tools.map((tool: { name: string }) => tool.name), reply: asked.body.result.structuredContent.text }));
`;

describe("the README's MCP server runs from the installed package: ask behind the API token", () => {
  for (const [name, command, args] of runtimes('mcp-serving.ts')) {
    test(`on ${name}`, () => {
      write('mcp-serving.ts', readmeMcpServing() + MCP_SERVING_DRIVER);
      const out = JSON.parse(ok(command, args, app).trim().split('\n').pop()!) as Record<string, unknown>;
      assert.deepEqual(out, {
        refused: 401,
        server: {
          name: 'support',
          title: 'Support agent',
          version: JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version,
        },
        tools: ['ask'],
        reply: 'hello',
      });
    });
  }
});

/** The first ts block of the README's "Limits" section, from the installed README. */
function readmeLimits(): string {
  const readme = readDocs(join(app, 'node_modules', 'agentward'));
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('# Limits\n')));
  assert.ok(block, 'the README has a ts block in its Limits section');
  return `const AGENT_API_TOKEN = 'readme-token-0123456789';\n${block[1]!.replace(/^export /gm, '')}`;
}

const LIMITS_DRIVER = `
const send = () => handler(new Request('https://agent.example.com/agent', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + AGENT_API_TOKEN }, body: '{"message":"hi"}' }));
const statuses: number[] = [];
let last: Response | undefined;
for (let i = 0; i < 61; i++) statuses.push((last = await send()).status);
console.log(JSON.stringify({ ok: statuses.filter((status) => status === 200).length, refused: statuses.slice(60), policy: last!.headers.get('ratelimit-policy'), limit: last!.headers.get('ratelimit'), retryAfter: last!.headers.get('retry-after'), body: await last!.json() }));
`;

describe("the README's limits run from the installed package: 60 requests a minute, the 61st refused", () => {
  for (const [name, command, args] of runtimes('limits.ts')) {
    test(`on ${name}`, () => {
      write('limits.ts', readmeLimits() + LIMITS_DRIVER);
      const out = JSON.parse(ok(command, args, app).trim().split('\n').pop()!) as {
        ok: number;
        refused: number[];
        policy: string;
        limit: string;
        retryAfter: string;
        body: unknown;
      };
      assert.equal(out.ok, 60);
      assert.deepEqual(out.refused, [429]);
      assert.equal(out.policy, '"requests";q=60;w=60');
      assert.match(out.limit, /^"requests";r=0;t=\d+$/);
      assert.ok(Number(out.retryAfter) >= 1 && Number(out.retryAfter) <= 60);
      assert.deepEqual(out.body, { error: 'Too Many Requests' });
    });
  }
});

/** The first ts block of the README's "An AI SDK provider" section, from the installed README. */
function readmeAiSdk(): string {
  const readme = readDocs(join(app, 'node_modules', 'agentward'));
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('### An AI SDK provider')));
  assert.ok(block, 'the README has a ts block with an AI SDK provider');
  return `const AGENT_API_TOKEN = ${JSON.stringify(TOKEN)};\n${block[1]!}`;
}

const AI_SDK_DRIVER = `
const answer = await handler(new Request('http://localhost/agent', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + AGENT_API_TOKEN }, body: JSON.stringify({ message: 'And in Rome?' }) }));
console.log(JSON.stringify({ result, answer: await answer.json() }));
`;

/** Runs a file of the consumer project without blocking this process (whose local servers it talks to). */
function runAsync(command: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: app, env: { ...process.env, PATH, NO_COLOR: '1', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const timer = setTimeout(() => child.kill(), 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      if (status === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(' ')} failed (${status}):\n${stdout}\n${stderr}`));
    });
  });
}

describe("the README's AI SDK example runs from the installed package with the real @ai-sdk/openai and zod, against a local chat-completions server", () => {
  before(() => {
    // As a user would: the provider and zod from the registry (or npm's cache), at the versions this repository tests.
    const dev = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
    ).devDependencies;
    ok(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        `@ai-sdk/openai@${dev['@ai-sdk/openai']}`,
        `zod@${dev.zod}`,
      ],
      app,
    );
  });

  for (const [name, command, args] of runtimes('ai-sdk-example.ts')) {
    test(`on ${name}`, async () => {
      const server = await wireServer([
        openAIChatWire.toolCall('call_1', 'weather', '{"city":"Paris"}', [120, 14]),
        openAIChatWire.text('It is 21 °C in Paris.', [150, 9]),
        openAIChatWire.text('It is 19 °C in Rome.', [170, 8]),
      ]);
      try {
        write('ai-sdk-example.ts', readmeAiSdk() + AI_SDK_DRIVER);
        const stdout = await runAsync(command, args, {
          OPENAI_BASE_URL: server.baseURL,
          OPENAI_API_KEY: 'sk-package-test-0123456789',
        });
        const { result, answer } = JSON.parse(stdout.trim().split('\n').pop()!) as Record<
          string,
          { text: string; usage: unknown; messages: unknown[] }
        >;
        assert.equal(result!.text, 'It is 21 °C in Paris.');
        assert.deepEqual(result!.usage, { inputTokens: 270, outputTokens: 23 });
        assert.equal(answer!.text, 'It is 19 °C in Rome.');
        assert.deepEqual(answer!.usage, { inputTokens: 170, outputTokens: 8 });
        const first = server.seen[0]!.body as {
          messages: { role: string; content: unknown }[];
          tools: { function: { name: string; parameters: { properties: unknown } } }[];
        };
        assert.deepEqual(first.messages[0], { role: 'system', content: 'Answer in one sentence.' });
        assert.deepEqual(
          first.tools.map((t) => [t.function.name, t.function.parameters.properties]),
          [['weather', { city: { type: 'string' } }]],
        );
        assert.deepEqual(openAIChatWire.read(first as never).settings, {
          temperature: 0.2,
          max_tokens: 400,
          top_p: undefined,
          stop: undefined,
        });
        assert.equal(openAIChatWire.read(server.seen[1]!.body).toolOutput, '{"city":"Paris","celsius":21}');
      } finally {
        await server.close();
      }
    });
  }

  test('the installed declarations take openai.chat() and openai.responses() models as they are, and type a zod tool (tsc strict, no cast)', () => {
    write(
      'ai-sdk-consumer.ts',
      `import { openai } from '@ai-sdk/openai';
import { createAgent, tool, type Agent, type ModelSettings, type Usage } from 'agentward';
import { z } from 'zod';

const weather = tool({
  name: 'weather',
  description: 'The weather',
  parameters: z.object({ city: z.string(), days: z.number().optional() }),
  execute: ({ city, days }) => {
    const checked: [string, number | undefined] = [city, days];
    // @ts-expect-error city is a string
    const wrong: number = city;
    return { checked, wrong };
  },
});
const settings: ModelSettings = { temperature: 0.2, maxOutputTokens: 100 };
export const fixed: Agent = createAgent({ name: 'a', model: openai.chat('gpt-4o-mini'), tools: [weather], settings });
export const chosen: Agent = createAgent({ name: 'b', model: async () => openai.responses('gpt-4o-mini'), settings: () => settings });
export async function total(): Promise<Usage | undefined> {
  return (await fixed.send('hi')).usage;
}
`,
    );
    write(
      'tsconfig.ai-sdk.json',
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          types: [],
          skipLibCheck: true,
        },
        files: ['ai-sdk-consumer.ts'],
      }),
    );
    ok(bin('tsc'), ['-p', 'tsconfig.ai-sdk.json'], app);
  });
});

/**
 * The documented Cloudflare Worker recipe (`// agent.ts`, and the `// worker.ts` that imports it and
 * builds its handler from `env` with `perEnv()`), from the installed docs.
 */
function readmeWorker(): { agent: string; worker: string } {
  const readme = readDocs(join(app, 'node_modules', 'agentward'));
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const agent = blocks.find((code) => code.startsWith('// agent.ts'));
  const worker = blocks.find(
    (code) =>
      code.startsWith('// worker.ts') &&
      code.includes("from './agent.ts'") &&
      code.includes('fetch: perEnv((env: Env)'),
  );
  assert.ok(agent && worker, 'the docs have a Worker recipe reading its secrets from env');
  return { agent, worker };
}

/** The first ts block of the installed README's section `heading`. */
function readmeBlock(heading: string): string {
  const readme = readDocs(join(app, 'node_modules', 'agentward'));
  const at = readme.indexOf(heading);
  assert.notEqual(at, -1, `the README has a section ${heading}`);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, `the README has a ts block in ${heading}`);
  return block[1]!;
}

describe('the README\'s "Coming from the AI SDK" block runs from the installed package: in-process streaming with onEvent, maxSteps, against a local chat-completions server', () => {
  before(() => {
    const dev = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
    ).devDependencies;
    ok(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        `@ai-sdk/openai@${dev['@ai-sdk/openai']}`,
        `zod@${dev.zod}`,
      ],
      app,
    );
  });

  for (const [name, command, args] of runtimes('coming-from-ai-sdk.ts')) {
    test(`on ${name}`, async () => {
      // Streamed answers (onEvent streams the run), sent whole: no gate.
      const streamed = (reply: ReturnType<typeof openAIChatWire.streamText>) => ({
        sse: (reply as { sse: string[] }).sse,
      });
      const server = await wireServer([
        streamed(openAIChatWire.streamToolCall('call_1', 'weather', ['{"city":', '"Paris"}'], [120, 14])),
        streamed(openAIChatWire.streamText(['It is ', '21 °C ', 'in Paris.'], [150, 9])),
      ]);
      try {
        write('coming-from-ai-sdk.ts', readmeBlock('## Coming from the AI SDK'));
        const stdout = await runAsync(command, args, {
          OPENAI_BASE_URL: server.baseURL,
          OPENAI_API_KEY: 'sk-package-test-0123456789',
        });
        // Each runtime prints objects its own way (Bun on several lines, with trailing commas).
        const printed = stdout.replace(/\s+/g, ' ').replace(/,? \}/g, ' }');
        assert.match(printed, /calling weather \{ city: ['"]Paris['"] \}/);
        assert.match(printed, /tool result \{ city: ['"]Paris['"], celsius: 21 \}/);
        assert.match(printed, /true \{ inputTokens: 270, outputTokens: 23 \}/);
        assert.deepEqual(
          server.seen.map(({ body }) => openAIChatWire.read(body).stream),
          [true, true],
          'onEvent streams the run: the provider was asked to stream',
        );
      } finally {
        await server.close();
      }
    });
  }
});

/** The Durable Objects the recipe's wrangler.toml binds, as Miniflare takes them. */
const RECIPE_OBJECTS = {
  AGENT_SESSIONS: { className: 'AgentSessions', useSQLite: true },
  AGENT_LIMITS: { className: 'AgentLimits', useSQLite: true },
  DPOP_REPLAY: { className: 'DpopReplay', useSQLite: true },
};

test("the README's Worker, bundled with esbuild from the installed package, runs in workerd with its secrets from env", async () => {
  const recipe = readmeWorker();
  write('agent.ts', recipe.agent);
  write('worker.ts', recipe.worker);
  const entry = join(app, 'worker.ts');
  const bundle = await bundleWorker(entry);
  assert.match(bundle, /node_modules\/agentward\/dist\/auth\//, 'the bundle holds the installed, compiled package');
  assert.doesNotMatch(bundle, /\/src\/auth\//);
  const worker = await startWorker({
    entry,
    bindings: { AGENT_API_TOKEN: TOKEN },
    miniflare: { durableObjects: RECIPE_OBJECTS } as never,
  });
  try {
    assert.equal((await worker.fetch('http://worker/agent/health')).status, 200);
    const refused = await worker.fetch('http://worker/agent', {
      method: 'POST',
      body: '{"message":"hi"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
    const ran = await worker.fetch('http://worker/agent', {
      method: 'POST',
      body: JSON.stringify({ message: 'hello from workerd' }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(ran.status, 200);
    assert.equal(((await ran.json()) as { text: string }).text, 'hello from workerd');
  } finally {
    await worker.dispose();
  }
  // Without the secret the list is empty: every agent route answers 401, health stays open.
  const bare = await startWorker({ entry, bindings: {}, miniflare: { durableObjects: RECIPE_OBJECTS } as never });
  try {
    assert.equal((await bare.fetch('http://worker/agent/health')).status, 200);
    assert.equal(
      (
        await bare.fetch('http://worker/agent', {
          method: 'POST',
          body: '{"message":"hi"}',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        })
      ).status,
      401,
    );
  } finally {
    await bare.dispose();
  }
});

/**
 * A Worker importing every entry a Worker may use (all but agentward/node), with the Durable Object
 * classes bound as `DurableObjectNamespace`s of their own type, which the Workers types accept only
 * for a class that extends `DurableObject` (its brand).
 */
const WORKER_CONSUMER = `import { agentHandler, apiToken, createAgent, echoModel, jwt, oidc, type AuthFn } from 'agentward';
import { routeAuth } from 'agentward/auth';
import {
  durableObjectLimitStore,
  durableObjectReplayStore,
  durableObjectSessionStore,
  durableObjectStore,
  LimitObject,
  perEnv,
  ReplayObject,
  SessionStoreObject,
} from 'agentward/cloudflare';
import { postgresStore } from 'agentward/postgres';

export { LimitObject as AgentLimits, ReplayObject as DpopReplay, SessionStoreObject as AgentSessions };

interface Bindings {
  AGENT_SESSIONS: DurableObjectNamespace<SessionStoreObject>;
  AGENT_LIMITS: DurableObjectNamespace<LimitObject>;
  DPOP_REPLAY: DurableObjectNamespace<ReplayObject>;
  AGENT_API_TOKEN: string;
}

export class Notes extends SessionStoreObject {
  store(state: DurableObjectState) {
    return durableObjectStore(state.storage);
  }
}

export default {
  fetch: perEnv((env: Bindings) => {
    const auth: AuthFn[] = [
      jwt({
        secret: env.AGENT_API_TOKEN,
        issuer: 'https://id.example.com',
        audience: 'agent',
        dpopReplay: durableObjectReplayStore(env.DPOP_REPLAY),
      }),
      oidc({ issuer: 'https://id.example.com', audience: 'agent' }),
      apiToken(env.AGENT_API_TOKEN),
    ];
    const agent = createAgent({ name: 'typed', model: echoModel(), store: durableObjectSessionStore(env.AGENT_SESSIONS) });
    void routeAuth(auth);
    void postgresStore;
    const limits = { requests: { limit: 60, windowSec: 60 }, store: durableObjectLimitStore(env.AGENT_LIMITS) };
    return agentHandler(agent, { basePath: '/agent', auth, limits });
  }),
} satisfies ExportedHandler<Bindings>;
`;

describe('a Worker type-checks against the installed declarations (strict, skipLibCheck off)', () => {
  const folder = () => join(app, 'typed-worker');
  const tsconfig = (types: string[], files: string[]) =>
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'esnext',
        moduleResolution: 'bundler',
        lib: ['es2023'],
        types,
        strict: true,
        skipLibCheck: false,
        noEmit: true,
      },
      files,
    });
  before(() => {
    mkdirSync(join(app, 'node_modules', '@cloudflare'), { recursive: true });
    symlinkSync(
      join(root, 'node_modules', '@cloudflare', 'workers-types'),
      join(app, 'node_modules', '@cloudflare', 'workers-types'),
      'dir',
    );
    write('typed-worker/worker.ts', WORKER_CONSUMER);
    write(
      'typed-worker/wrangler.toml',
      [
        'name = "typed-worker"',
        'main = "worker.ts"',
        'compatibility_date = "2025-01-01"',
        ...['AGENT_SESSIONS:AgentSessions', 'AGENT_LIMITS:AgentLimits', 'DPOP_REPLAY:DpopReplay'].flatMap((pair) => {
          const [name, className] = pair.split(':');
          return ['[[durable_objects.bindings]]', `name = "${name}"`, `class_name = "${className}"`];
        }),
        '[[migrations]]',
        'tag = "v1"',
        'new_sqlite_classes = ["AgentSessions", "AgentLimits", "DpopReplay"]',
        '',
      ].join('\n'),
    );
  });

  test('under @cloudflare/workers-types', () => {
    write('typed-worker/tsconfig.workers-types.json', tsconfig(['@cloudflare/workers-types'], ['worker.ts']));
    ok(bin('tsc'), ['-p', 'tsconfig.workers-types.json'], folder());
  });

  test('under the types `wrangler types` writes (the runtime and the Env of wrangler.toml, its namespaces typed by the exported classes)', () => {
    ok(bin('wrangler'), ['types'], folder());
    const generated = readFileSync(join(folder(), 'worker-configuration.d.ts'), 'utf8');
    assert.match(generated, /AGENT_LIMITS: DurableObjectNamespace<import\("\.\/worker"\)\.AgentLimits>/);
    write('typed-worker/tsconfig.wrangler.json', tsconfig([], ['worker-configuration.d.ts', 'worker.ts']));
    ok(bin('tsc'), ['-p', 'tsconfig.wrangler.json'], folder());
  });
});

const CONSUMER = `import {
  AuthConfigError, AuthError, anonymous, apiToken, basic, jwt, oidc, routeAuth,
  type AuthFn, type AuthOption, type AuthResult, type Challenge, type Principal, type PrincipalInput, type RefusalListener,
} from 'agentward/auth';
import { agentHandler, createAgent, echoModel, memoryStore, type Agent, type RunResult } from 'agentward';
import { fileStore, serve, toNodeListener, type AgentServer, type NodeListener } from 'agentward/node';
import { createServer } from 'node:http';

const challenges: readonly Challenge[] = [{ scheme: 'Key', realm: 'agent' }];
const custom: AuthFn = Object.assign(
  async (request: Request): Promise<PrincipalInput | null> => (request.headers.get('x-key') === 'k' ? { id: 'svc', type: 'service' } : null),
  { challenges },
);
const list: AuthOption = [
  jwt({ secret: 'a-secret-of-at-least-thirty-two-bytes!!', audience: 'agent', issuer: 'https://id.example.com' }),
  jwt({ jwksUrl: 'https://id.example.com/jwks.json', audience: 'agent' }),
  oidc({ issuer: 'https://id.example.com', audience: 'agent' }),
  basic({ users: { ada: 'pw-0123456789' }, realm: 'agent' }),
  apiToken('token-0123456789', { id: 'ci-bot' }),
  anonymous(),
  custom,
];
const authenticate = routeAuth(list);
const alsoBoolean = routeAuth((request: Request) => request.headers.has('x-ok'));
export async function who(request: Request): Promise<string> {
  const result: AuthResult = await authenticate(request);
  if (!result.ok) return String(result.response.status);
  const principal: Principal = result.principal;
  const issuer: string | undefined = principal.issuer;
  return principal.id + principal.type + principal.authenticator + (issuer ?? '');
}

const agent: Agent = createAgent({
  name: 'typed',
  model: echoModel(),
  store: memoryStore(),
  instructions: ({ principal }) => 'You help ' + (principal?.id ?? 'a guest'),
});
export const handler: (request: Request) => Promise<Response> = agentHandler(agent, { basePath: '/agent', auth: list });
export const listener: NodeListener = toNodeListener(handler);
createServer(listener);
export async function start(): Promise<AgentServer> {
  const result: RunResult = await agent.send('hi');
  void result.text;
  return serve({ agent: { name: 'served', model: echoModel(), store: fileStore('.data') }, auth: [apiToken('token-0123456789')], port: 0 });
}
export const errors = [new AuthConfigError('x'), AuthError, alsoBoolean] as const;
// The README's auth.ts listener, typed as it says (strict: no implicit any).
export const onRefused: RefusalListener = ({ reason, entry }) => console.warn(\`refused by \${entry}: \${reason}\`);
`;

describe('a consumer type-checks against the installed declarations', () => {
  before(() => {
    // `tsc --init` as a user runs it; a Node project has @types/node (linked from the repository's dev dependencies).
    ok(bin('tsc'), ['--init'], app);
    mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
    symlinkSync(join(root, 'node_modules', '@types', 'node'), join(app, 'node_modules', '@types', 'node'), 'dir');
    write('consumer.ts', CONSUMER);
    write(
      'wrong.ts',
      "import { routeAuth } from 'agentward/auth';\nimport { toNodeListener } from 'agentward/node';\nrouteAuth(42);\ntoNodeListener('not a handler');\n",
    );
    const config = (files: string[], options: Record<string, unknown>) =>
      JSON.stringify({
        extends: './tsconfig.json',
        compilerOptions: { noEmit: true, types: ['node'], ...options },
        files,
      });
    write('tsconfig.strict.json', config(['consumer.ts'], { strict: true }));
    write(
      'tsconfig.exact.json',
      config(['consumer.ts'], { strict: true, exactOptionalPropertyTypes: true, skipLibCheck: false }),
    );
    write('tsconfig.wrong.json', config(['wrong.ts'], { strict: true }));
  });

  test('tsc --init defaults with strict', () => {
    ok(bin('tsc'), ['-p', 'tsconfig.strict.json'], app);
  });

  test('and with exactOptionalPropertyTypes, checking the library declarations too (skipLibCheck off)', () => {
    ok(bin('tsc'), ['-p', 'tsconfig.exact.json'], app);
  });

  // The README's supported range: TypeScript 5.7 is the first whose Uint8Array is generic, as the declarations need.
  test('with TypeScript 5.7, the oldest version the README supports (installed into the consumer from the registry)', () => {
    const older = join(work, 'typescript-5.7');
    mkdirSync(older);
    write('../typescript-5.7/package.json', JSON.stringify({ name: 'typescript-5-7', private: true }));
    ok('npm', ['install', '--no-audit', '--no-fund', 'typescript@5.7.3'], older);
    const tsc57 = join(older, 'node_modules', 'typescript', 'bin', 'tsc');
    assert.match(ok(node22, [tsc57, '--version'], app), /Version 5\.7\.3/);
    ok(node22, [tsc57, '-p', 'tsconfig.exact.json'], app);
  });

  test('the check can fail: wrong arguments to the public API are type errors', () => {
    const result = run(bin('tsc'), ['-p', 'tsconfig.wrong.json'], app);
    assert.notEqual(result.status, 0);
    assert.equal((result.stdout.match(/error TS2345/g) ?? []).length, 2, result.stdout);
  });
});

test("the Tracing page's install line installs as printed, beside agentward in the user's project (npm install --dry-run against the registry)", () => {
  const page = readFileSync(join(app, 'node_modules', 'agentward', 'docs', 'tracing.md'), 'utf8');
  const lines = [...page.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((match) => match[1]!.split('\n'))
    .filter((line) => line.startsWith('npm install '));
  assert.equal(lines.length, 1, 'the Tracing page has one npm install line');
  const args = lines[0]!.split(/\s+/).slice(2);
  assert.ok(
    args.includes('@opentelemetry/sdk-trace-node') ||
      args.some((arg) => arg.startsWith('@opentelemetry/sdk-trace-node@')),
  );
  const output = ok('npm', ['install', '--dry-run', '--no-audit', '--no-fund', ...args], app);
  assert.doesNotMatch(output, /ERESOLVE/);
});

/** `npx agentward <args>` in the project, a server on a free port; `listening(n)` is the URL it printed the nth time it listened. */
function npxServer(t: { after(fn: () => Promise<void>): void }, args: string[], shellLine?: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH, PORT: '0', HOST: '127.0.0.1', AGENT_LOG: 'off' };
  delete env.AGENT_API_TOKEN;
  delete env.AGENT_DATA_DIR;
  // A line as a user types it into a shell, or npx with its arguments.
  const [command, commandArgs] =
    shellLine === undefined ? ['npx', ['--no-install', 'agentward', ...args]] : ['sh', ['-c', shellLine]];
  const child = spawn(command, commandArgs, {
    cwd: app,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  t.after(() => stopGroup(child));
  let output = '';
  child.stderr.on('data', (chunk) => (output += chunk));
  child.stdout.on('data', (chunk) => (output += chunk));
  const listening = async (n: number) => {
    for (const deadline = Date.now() + 60_000; ; await new Promise((resolve) => setTimeout(resolve, 50))) {
      const urls = [...output.matchAll(/listening on (http:\/\/\S+)/g)].map((match) => match[1]!);
      if (urls.length >= n) return urls[n - 1]!;
      assert.ok(
        Date.now() < deadline && child.exitCode === null,
        `agentward ${args.join(' ')} did not listen ${n} time(s):\n${output}`,
      );
    }
  };
  return { listening, output: () => output };
}

describe('the agentward command from the installed package (npx)', () => {
  test('npx agentward --help prints the usage', () => {
    const output = ok('npx', ['--no-install', 'agentward', '--help'], app);
    assert.match(output, /agentward init <dir>/);
    assert.match(output, /agentward start <dir\|out>/);
  });

  test('npx agentward init, then start: a request to the started server answers', async (t) => {
    const created = ok('npx', ['--no-install', 'agentward', 'init', 'my-agent'], app);
    const token = /API token: (\S+)/.exec(created)?.[1];
    assert.ok(token, created);
    const url = await npxServer(t, ['start', 'my-agent']).listening(1);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ message: 'hello from npx' }) });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { text: string }).text, 'hello from npx');
    assert.equal((await fetch(url, { method: 'POST', body: '{"message":"x"}' })).status, 401);
  });

  test("agentward init's printed next command, run as printed, serves the fresh init: the scaffold's tool waits for approval, whoami names the caller, and sed -i on agent.ts restarts it with one line", async (t) => {
    // init run as the project's own bin (not through npx): what it prints next runs as printed, here (design §31).
    const created = ok(join(app, 'node_modules', '.bin', 'agentward'), ['init', 'dev-agent'], app, { npm_command: '' });
    const token = /API token: (\S+)/.exec(created)?.[1];
    assert.ok(token, created);
    assert.match(created, /then, in the playground: \/tool refund \{"orderId":"A-1","amount":20\}/);
    const next = /^next: (.+)$/m.exec(created)?.[1];
    assert.equal(next, 'npx agentward dev dev-agent', created);
    const { listening, output } = npxServer(t, [], next);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const first = await listening(1);
    const paused = (await (
      await fetch(first, {
        method: 'POST',
        headers,
        body: JSON.stringify({ message: '/tool refund {"orderId":"A-1","amount":20}' }),
      })
    ).json()) as { status: string; approvals: { tool: string }[] };
    assert.equal(paused.status, 'awaiting-approval');
    assert.equal(paused.approvals[0]?.tool, 'refund');
    assert.deepEqual(await (await fetch(`${first}/playground/whoami`, { headers })).json(), {
      principal: { id: 'api-token', type: 'service', authenticator: 'api-token' },
    });
    const page = await fetch(`${first}/playground`);
    assertPlaygroundInlined(await page.text(), page.headers.get('content-security-policy') ?? '');

    const sed = spawnSync('sed', ['-i', 's/Refunds an order/Refunds one order/', join(app, 'dev-agent', 'agent.ts')], {
      encoding: 'utf8',
    });
    assert.equal(sed.status, 0, sed.stderr);
    // One line for the restart, no second banner; the restarted server listens where the first did.
    for (const deadline = Date.now() + 60_000; !/agent\.ts changed; reloaded in \d+ ms/.test(output()); ) {
      assert.ok(Date.now() < deadline, `no reload line within 60 s:\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(output().match(/listening on/g)?.length, 1, output());
    assert.equal(
      (await fetch(first, { method: 'POST', headers, body: '{"message":"after the restart"}' })).status,
      200,
    );
  });

  test('on Node older than 22.13 the command says which Node it needs and exits 1', () => {
    // Node 22 pretending to be 22.12 (process.versions is patched before the launcher runs).
    const pretend = `data:text/javascript,Object.defineProperty(process,'version',{value:'v22.12.0'});Object.defineProperty(process,'versions',{value:{...process.versions,node:'22.12.0'}})`;
    const launcher = join(app, 'node_modules', 'agentward', 'dist', 'bin', 'agentward.js');
    const result = run(node22, ['--import', pretend, launcher, '--help'], app);
    assert.equal(result.status, 1);
    assert.equal(result.stderr.trim(), 'agentward needs Node 22.13 or newer (found v22.12.0)');
    assert.equal(result.stdout, '');
    const system = spawnSync('node', ['-p', 'process.versions.node'], { encoding: 'utf8' });
    const [major = 0, minor = 0] = (system.stdout ?? '').trim().split('.').map(Number);
    if (system.status === 0 && (major < 22 || (major === 22 && minor < 13))) {
      // A real older Node on this machine too (PATH without the repository's Node 22).
      const real = spawnSync('node', [launcher, '--help'], { encoding: 'utf8' });
      assert.equal(real.status, 1);
      assert.equal(real.stderr.trim(), `agentward needs Node 22.13 or newer (found v${system.stdout.trim()})`);
    }
  });
});
