// src/auth vendored (design §23): the folder copied alone into an empty temporary directory (no
// package.json, no node_modules, no tsconfig, nothing of the repository beside it) verifies an HS256
// JWT made with a secret, an ES256 JWT made with a PEM public key, and an API token, and refuses a
// forged, an expired and a wrong one, through `routeAuth()` of its index.ts, on Node 22 (its own type
// stripping, no flag), Bun, Deno (no permission, no config) and workerd (bundled with esbuild, run
// in Miniflare without Node compatibility).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWorker } from '../helpers/workerd.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
const SECRET = 'vendored-folder-secret-of-at-least-32-bytes';
const API_TOKEN = 'vendored-api-token-0123456789';
const ISSUER = 'https://issuer.example';
const AUDIENCE = 'vendored-api';

let dir = '';

const encoder = new TextEncoder();
const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const segment = (value: unknown) => b64url(encoder.encode(JSON.stringify(value)));

async function signed(
  alg: 'HS256' | 'ES256',
  key: CryptoKey,
  claims: Record<string, unknown>,
  kid?: string,
): Promise<string> {
  const input = `${segment({ alg, typ: 'JWT', ...(kid ? { kid } : {}) })}.${segment(claims)}`;
  const params = alg === 'HS256' ? 'HMAC' : { name: 'ECDSA', hash: 'SHA-256' };
  const signature = new Uint8Array(await crypto.subtle.sign(params, key, encoder.encode(input)));
  return `${input}.${b64url(signature)}`;
}

/** A case every runtime runs: the Authorization header to send, and the outcome expected (`<authenticator>:<id>` or the status). */
interface Case {
  name: string;
  authorization: string;
  expect: string;
}

/** The cases, and the PEM of the ES256 key that signed the valid ES256 token. */
async function cases(): Promise<{ list: Case[]; pem: string }> {
  const now = Math.floor(Date.now() / 1000);
  const valid = { iss: ISSUER, aud: AUDIENCE, iat: now - 5, exp: now + 3600 };
  const hmac = await crypto.subtle.importKey('raw', encoder.encode(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const otherHmac = await crypto.subtle.importKey(
    'raw',
    encoder.encode(`${SECRET}-other`),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const ec = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const otherEc = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const pem = `-----BEGIN PUBLIC KEY-----\n${Buffer.from(await crypto.subtle.exportKey('spki', ec.publicKey))
    .toString('base64')
    .replace(/.{64}/g, '$&\n')}\n-----END PUBLIC KEY-----\n`;
  const list: Case[] = [
    {
      name: 'HS256 JWT',
      authorization: `Bearer ${await signed('HS256', hmac, { ...valid, sub: 'ada' })}`,
      expect: 'jwt:ada',
    },
    {
      name: 'ES256 JWT',
      authorization: `Bearer ${await signed('ES256', ec.privateKey, { ...valid, sub: 'grace' })}`,
      expect: 'jwt:grace',
    },
    { name: 'API token', authorization: `Bearer ${API_TOKEN}`, expect: 'api-token:vendored-service' },
    {
      name: 'HS256 JWT signed with another secret',
      authorization: `Bearer ${await signed('HS256', otherHmac, { ...valid, sub: 'ada' })}`,
      expect: '401',
    },
    {
      name: 'ES256 JWT signed with another key',
      authorization: `Bearer ${await signed('ES256', otherEc.privateKey, { ...valid, sub: 'grace' })}`,
      expect: '401',
    },
    {
      name: 'expired HS256 JWT',
      authorization: `Bearer ${await signed('HS256', hmac, { ...valid, sub: 'ada', exp: now - 3600 })}`,
      expect: '401',
    },
    {
      name: 'HS256 JWT for another audience',
      authorization: `Bearer ${await signed('HS256', hmac, { ...valid, aud: 'other-api', sub: 'ada' })}`,
      expect: '401',
    },
    { name: 'wrong API token', authorization: `Bearer ${API_TOKEN.slice(0, -1)}X`, expect: '401' },
  ];
  return { list, pem };
}

/** check.ts: the vendored folder's only user. Runs on every runtime; no global but Web APIs. */
function checkSource(list: Case[], pem: string): string {
  return `import { apiToken, jwt, routeAuth } from './auth/index.ts';
import type { Principal } from './auth/index.ts';

const CASES: { name: string; authorization: string; expect: string }[] = ${JSON.stringify(list)};

export async function check(): Promise<string[]> {
  const authenticate = routeAuth([
    jwt({ secret: ${JSON.stringify(SECRET)}, issuer: ${JSON.stringify(ISSUER)}, audience: ${JSON.stringify(AUDIENCE)} }),
    jwt({ publicKey: ${JSON.stringify(pem)}, issuer: ${JSON.stringify(ISSUER)}, audience: ${JSON.stringify(AUDIENCE)} }),
    apiToken(${JSON.stringify(API_TOKEN)}, { id: 'vendored-service' }),
  ]);
  const lines: string[] = [];
  for (const { name, authorization, expect } of CASES) {
    const result = await authenticate(new Request('https://api.example/agent', { method: 'POST', headers: { authorization } }));
    const got = result.ok ? describe(result.principal) : String(result.response.status);
    lines.push(got === expect ? 'ok ' + name : 'FAIL ' + name + ': expected ' + expect + ', got ' + got);
  }
  return lines;
}

function describe(principal: Principal): string {
  return principal.authenticator + ':' + principal.id;
}
`;
}

const RUN = `import { check } from './check.ts';
console.log(JSON.stringify(await check()));
`;
const WORKER = `import { check } from './check.ts';
export default { async fetch(): Promise<Response> { return Response.json(await check()); } };
`;

before(async () => {
  const { list, pem } = await cases();
  dir = mkdtempSync(join(tmpdir(), 'agentward-vendored-auth-'));
  cpSync(join(root, 'src', 'auth'), join(dir, 'auth'), { recursive: true });
  writeFileSync(join(dir, 'check.ts'), checkSource(list, pem));
  writeFileSync(join(dir, 'run.ts'), RUN);
  writeFileSync(join(dir, 'worker.ts'), WORKER);
});

after(() => rmSync(dir, { recursive: true, force: true }));

function expectAllOk(lines: unknown, runtime: string): void {
  assert.ok(Array.isArray(lines), `${runtime}: ${String(lines)}`);
  assert.equal(lines.length, 8, `${runtime}: every case ran`);
  assert.deepEqual(
    lines.filter((line) => !String(line).startsWith('ok ')),
    [],
    runtime,
  );
}

function runIn(command: string, args: string[]): string[] {
  // PATH without node_modules/.bin of the repository, HOME and caches kept: nothing of the repository is reachable.
  const result = spawnSync(command, args, {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
    timeout: 120_000,
  });
  if (result.error) throw result.error;
  assert.equal(result.status, 0, `${command} ${args.join(' ')}:\n${result.stdout}\n${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as string[];
}

test('the copied folder holds src/auth alone: its files and the three entry files, nothing else', () => {
  assert.deepEqual(readdirSync(dir).sort(), ['auth', 'check.ts', 'run.ts', 'worker.ts']);
  assert.ok(readdirSync(join(dir, 'auth')).includes('index.ts'));
  assert.ok(readdirSync(join(dir, 'auth')).includes('README.md'));
});

test('Node 22 verifies a JWT (HS256 secret, ES256 public key) and an API token with the copied folder, by its own type stripping, no flag', () => {
  const version = spawnSync(bin('node'), ['--version'], { encoding: 'utf8' }).stdout.trim();
  assert.match(version, /^v22\./);
  expectAllOk(runIn(bin('node'), ['run.ts']), `node ${version}`);
});

test('Bun verifies a JWT (HS256 secret, ES256 public key) and an API token with the copied folder', () => {
  expectAllOk(runIn(bin('bun'), ['run.ts']), 'bun');
});

test('Deno verifies a JWT (HS256 secret, ES256 public key) and an API token with the copied folder, with no permission and no config', () => {
  expectAllOk(runIn(bin('deno'), ['run', '--no-config', '--no-lock', '--no-prompt', 'run.ts']), 'deno');
});

test('workerd verifies a JWT (HS256 secret, ES256 public key) and an API token with the copied folder, bundled by esbuild, without Node compatibility', async () => {
  const worker = await startWorker({ entry: join(dir, 'worker.ts') });
  try {
    expectAllOk(await (await worker.fetch('http://worker/')).json(), 'workerd');
  } finally {
    await worker.dispose();
  }
});
