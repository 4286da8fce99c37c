// A real authorization server: oidc-provider 9 on 127.0.0.1, issuing client-credentials and
// authorization-code JWT access tokens (typ at+jwt, resource indicators) signed RS256, PS256,
// ES256 and EdDSA. tests/helpers/idp-scenario.ts verifies them with oidc() and jwt({ jwksUrl })
// as the README documents, refuses the ID tokens, and follows a key rotation; it runs here under
// Node, in child processes under Bun and Deno, and inside workerd (its fetches go over loopback).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startAuthorizationServer, type AuthorizationServer } from '../helpers/authorization-server.ts';
import {
  ALGORITHMS,
  clientFor,
  expectedOutcomes,
  runScenario,
  type ScenarioInput,
  type ScenarioResult,
} from '../helpers/idp-scenario.ts';
import { startWorker } from '../helpers/workerd.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
let server: AuthorizationServer;
let input: ScenarioInput;

before(async () => {
  server = await startAuthorizationServer();
  const userTokens: ScenarioInput['userTokens'] = {};
  for (const alg of ALGORITHMS) userTokens[alg] = await server.authorizationCode(clientFor(alg), 'alice');
  input = { issuer: server.issuer, userTokens };
});
after(() => server?.close());

function checkResult(runtime: string, result: ScenarioResult): void {
  for (const [alg, why] of Object.entries(result.lacks))
    console.log(`${runtime} lacks ${alg} (${why}): its tokens must skip with one warning`);
  assert.deepEqual(result.outcomes, expectedOutcomes(result.lacks), runtime);
  for (const alg of Object.keys(result.lacks)) {
    assert.equal(
      result.warnings.filter((line) => line.includes(`key for ${alg}`)).length,
      2,
      `${runtime}: one warning per key set (oidc and jwks) for ${alg}`,
    );
  }
  assert.ok(!result.warnings.some((line) => /eyJ/.test(line)), 'no token in any warning');
}

test('the provider issues what the tests need: at+jwt access tokens for the resource, ID tokens for the client', () => {
  const [header, payload] = input.userTokens
    .PS256!.accessToken.split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
  assert.deepEqual([header.alg, header.typ], ['PS256', 'at+jwt']);
  assert.deepEqual(
    [payload.aud, payload.client_id, payload.sub, payload.scope],
    ['https://agent.example/api', 'svc-ps256', 'alice', 'agent:invoke'],
  );
  const id = JSON.parse(Buffer.from(input.userTokens.EdDSA!.idToken.split('.')[1]!, 'base64url').toString());
  assert.equal(id.aud, 'svc-eddsa');
});

test('node: oidc() and jwt({ jwksUrl }) against the real authorization server', async () => {
  checkResult('node', await runScenario(input));
});

for (const runtime of ['bun', 'deno'] as const) {
  test(`${runtime}: oidc() and jwt({ jwksUrl }) against the real authorization server, in a child process`, async () => {
    const args =
      runtime === 'bun'
        ? ['tests/helpers/children/idp-scenario.ts']
        : ['run', '-A', '--no-check', 'tests/helpers/children/idp-scenario.ts'];
    const child = spawn(`${root}node_modules/.bin/${runtime}`, args, {
      cwd: root,
      env: { ...process.env, IDP_SCENARIO: JSON.stringify(input), NO_COLOR: '1' },
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    const line = output.split('\n').find((text) => text.startsWith('IDP_RESULT '));
    assert.ok(line !== undefined, `${runtime} exited ${code}: ${output}`);
    checkResult(runtime, JSON.parse(line.slice('IDP_RESULT '.length)));
  });
}

test('workerd: oidc() and jwt({ jwksUrl }) against the real authorization server, fetched over loopback', async () => {
  const worker = await startWorker({ entry: 'tests/helpers/workerd/idp-worker.ts', bindings: { IDP_SCENARIO: input } });
  try {
    const response = await worker.fetch('http://worker/');
    const text = await response.text();
    assert.equal(response.status, 200, text);
    checkResult('workerd', JSON.parse(text));
  } finally {
    await worker.dispose();
  }
});

// Design §16: oidc-provider's DPoP feature (RFC 9449 §5) binds the access token to the client's proof key.
test('oidc-provider with DPoP: its bound access token (cnf.jkt) is accepted over DPoP with a proof, refused over Bearer, by oidc() and jwt({ jwksUrl }) in serve()', async (t) => {
  const { serve } = await import('../../src/node/server.ts');
  const { createAgent, echoModel, memoryStore } = await import('../../src/agent/index.ts');
  const { jwt, oidc } = await import('../../src/auth/index.ts');
  const { testKey } = await import('../helpers/jwt.ts');
  const { dpopProof, thumbprint } = await import('../helpers/dpop.ts');
  const { RESOURCE } = await import('../helpers/idp-scenario.ts');
  const key = await testKey('ES256');
  const now = () => Math.floor(Date.now() / 1000);
  const answer = await server.dpopClientCredentials(
    clientFor('ES256'),
    await dpopProof(key, { htm: 'POST', htu: `${server.issuer}/token`, iat: now() }),
  );
  assert.equal(answer.token_type, 'DPoP');
  const payload = JSON.parse(Buffer.from(answer.access_token!.split('.')[1]!, 'base64url').toString()) as {
    cnf?: { jkt?: string };
    aud?: unknown;
  };
  assert.equal(payload.cnf?.jkt, await thumbprint(key.jwk), 'the provider bound the token to the proof key');
  const token = answer.access_token!;
  for (const [name, entry] of [
    ['oidc()', oidc({ issuer: server.issuer, audience: RESOURCE, typ: 'at+jwt', dpop: 'allowed' })],
    ['jwt({ jwksUrl })', jwt({ jwksUrl: server.jwksUri, issuer: server.issuer, audience: RESOURCE, dpop: 'allowed' })],
  ] as const) {
    const served = await serve({
      agent: createAgent({ name: 'dpop', model: echoModel(), store: memoryStore() }),
      auth: [entry],
      port: 0,
      log: 'off',
    });
    t.after(() => served.close());
    const url = `${served.url}/agent`;
    const send = (authorization: string, proof?: string) =>
      fetch(url, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json', ...(proof !== undefined && { dpop: proof }) },
        body: '{"message":"bound"}',
      });
    const accepted = await send(`DPoP ${token}`, await dpopProof(key, { token, htm: 'POST', htu: url, iat: now() }));
    assert.equal(accepted.status, 200, `${name}: ${await accepted.clone().text()}`);
    assert.equal(((await accepted.json()) as { text: string }).text, 'bound');
    const asBearer = await send(`Bearer ${token}`);
    assert.equal(asBearer.status, 401, `${name}: the bound token as a bearer token is refused (no downgrade)`);
    assert.deepEqual(
      asBearer.headers.get('www-authenticate'),
      'Bearer error="invalid_token", DPoP algs="ES256 EdDSA Ed25519 RS256 PS256"',
    );
    const stolen = await send(
      `DPoP ${token}`,
      await dpopProof(await testKey('ES256'), { token, htm: 'POST', htu: url, iat: now() }),
    );
    assert.equal(stolen.status, 401, `${name}: the token with a proof by another key is refused`);
    assert.match(stolen.headers.get('www-authenticate') ?? '', /DPoP error="invalid_dpop_proof"/);
  }
});
