// Design §20: a misconfiguration is an error at creation, never an open route or a forgeable key.
// Key-shaped HMAC secrets, an `auth` that holds nothing, option objects that inherit keys, two
// apiToken() entries of one principal, and the DPoP algorithms of the 401 and of the metadata
// document. Runs on Node, Bun, Deno and inside workerd (tests/auth/jws/workerd.node.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuthConfigError,
  apiToken,
  basic,
  introspection,
  jwt,
  oidc,
  protectedResourceMetadata,
  routeAuth,
  wwwAuthenticateLines,
  type AuthFn,
} from '../../src/auth/index.ts';
import { AgentError, createAgent, echoModel, memoryStore, openAICompatible } from '../../src/agent/index.ts';
import { agentHandler } from '../../src/http/index.ts';
import { postgresReplayStore, postgresStore } from '../../src/postgres/index.ts';
import { AUDIENCE, ISSUER, claims, encoder, hmacSigner, signToken, testKey, toPem } from '../helpers/jwt.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { base64 } from '../helpers/requests.ts';
import { isRsaModulusText } from '../../src/auth/weak-secrets.ts';
import idpKeys from '../helpers/idp-keys.json' with { type: 'json' };

const TOKEN_A = 'tok_misconfiguration_a_0123456789';
const TOKEN_B = 'tok_misconfiguration_b_0123456789';
const agent = () => createAgent({ name: 'misconfigured', model: echoModel(), store: memoryStore() });
const send = (handler: (request: Request) => Promise<Response>, headers: Record<string, string> = {}) =>
  handler(
    new Request('https://agent.example.com/agent', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: '{"message":"hi"}',
    }),
  );

/** `create` throws AuthConfigError (AGENT_AUTH_CONFIG_INVALID) whose message matches `pattern` and holds none of `secrets`. */
function refused(create: () => unknown, pattern: RegExp, secrets: readonly string[] = []): void {
  assert.throws(create, (error: unknown) => {
    assert.ok(error instanceof AuthConfigError, `AuthConfigError, got ${String(error)}`);
    assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
    assert.match(error.message, pattern);
    for (const secret of secrets) assert.ok(!error.message.includes(secret), 'the message never holds the secret');
    return true;
  });
}

const KEY_SHAPED = /^jwt\(\): secret looks like a PEM\/JWK key; give the public key as publicKey/;

test('jwt({ secret }): a public key PEM given as the HMAC secret is refused at creation; the HS256 token it would accept is never accepted', async () => {
  const provider = await testKey('RS256');
  // Created, it would accept an HS256 token that anyone holding the public key signs with its text.
  refused(() => jwt({ secret: provider.pem, issuer: ISSUER, audience: AUDIENCE }), KEY_SHAPED, [
    provider.pem.split('\n')[1]!,
  ]);
  refused(() => jwt({ secret: provider.pem, algorithms: ['HS256'], allowAnyAudience: true }), KEY_SHAPED);
  // A real secret of the same length is still taken.
  const secret = 'x'.repeat(provider.pem.length);
  const entry = jwt({ secret, issuer: ISSUER, audience: AUDIENCE });
  const token = await signToken(
    { alg: 'HS256' },
    claims({ iat: undefined, exp: Math.floor(Date.now() / 1000) + 600 }),
    await hmacSigner(secret),
  );
  assert.equal(
    (await routeAuth(entry)(new Request('https://a.example/', { headers: { authorization: `Bearer ${token}` } }))).ok,
    true,
  );
});

test('jwt({ secret }): every key-shaped secret is refused: PEM public and private, JWK and JWKS text, their bytes, DER public key bytes', async () => {
  const ec = await testKey('ES256');
  const ed = await testKey('EdDSA');
  const rsa = await testKey('RS256');
  const pkcs8 = new Uint8Array(
    await crypto.subtle.exportKey(
      'pkcs8',
      await (async () => {
        const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
          'sign',
          'verify',
        ])) as CryptoKeyPair;
        return pair.privateKey;
      })(),
    ),
  );
  const texts: Record<string, string> = {
    'PEM public key (EC)': ec.pem,
    'PEM public key (RSA, PKCS#1 label)': rsa.pem.replace(/PUBLIC KEY/g, 'RSA PUBLIC KEY'),
    'PEM public key (Ed25519), no trailing newline': ed.pem.trim(),
    'PEM private key (PKCS#8)': toPem(pkcs8, 'PRIVATE KEY'),
    'PEM EC private key label': `-----BEGIN EC PRIVATE KEY-----\n${'A'.repeat(64)}\n-----END EC PRIVATE KEY-----\n`,
    'PEM with text around it': `key:\n${ec.pem}\n(end)`,
    'public JWK text': JSON.stringify(ec.jwk),
    'private JWK text': JSON.stringify(ec.privateJwk),
    'JWKS text': JSON.stringify({ keys: [ec.jwk, ed.jwk] }),
    'JWK text, indented, with whitespace around': `\n  ${JSON.stringify(ed.jwk, null, 2)}\n`,
    'an oct JWK text': JSON.stringify({ kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA' }),
  };
  for (const text of Object.values(texts)) {
    refused(() => jwt({ secret: text, allowAnyAudience: true }), KEY_SHAPED, [text]);
    refused(() => jwt({ secret: encoder.encode(text), allowAnyAudience: true }), KEY_SHAPED);
  }
  for (const der of [ec.spki, rsa.spki]) refused(() => jwt({ secret: der, allowAnyAudience: true }), KEY_SHAPED);
  // Secrets that merely look odd are secrets: random bytes, JSON that is neither an object nor an array, base64 text.
  const random = crypto.getRandomValues(new Uint8Array(64));
  for (const secret of [
    random,
    '"a-json-string-is-no-key-0123456789"',
    btoa(String.fromCharCode(...random)),
    '-----BEGI'.padEnd(40, 'x'),
  ]) {
    assert.doesNotThrow(() => jwt({ secret, allowAnyAudience: true }));
  }
});

test('jwt({ secret }): the n of an RSA JWK (its modulus, base64url) is refused at creation like the other public forms, so no token forged with it can pass (design §26)', async () => {
  for (const alg of ['RS256', 'PS384'] as const) {
    const { jwk } = await testKey(alg);
    const n = (jwk as { n: string }).n;
    refused(() => jwt({ secret: n, issuer: ISSUER, audience: AUDIENCE }), KEY_SHAPED, [n]);
    refused(() => jwt({ secret: `${n}\n`, allowAnyAudience: true }), KEY_SHAPED, [n]);
  }
  for (const modulusLength of [3072, 4096]) {
    const pair = (await crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      true,
      ['sign', 'verify'],
    )) as CryptoKeyPair;
    const { n } = await crypto.subtle.exportKey('jwk', pair.publicKey);
    refused(() => jwt({ secret: n!, allowAnyAudience: true }), KEY_SHAPED);
  }
  // Random base64url secrets are secrets: the usual 32 and 64 bytes, and 256 bytes that are no modulus (even).
  const random = (length: number) => crypto.getRandomValues(new Uint8Array(length));
  const base64url = (bytes: Uint8Array) =>
    btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
  const even = random(256);
  even[0] = 0xc1;
  even[255] = 0x10;
  for (const bytes of [random(32), random(64), even])
    assert.doesNotThrow(() => jwt({ secret: base64url(bytes), allowAnyAudience: true }));
});

/** The body of a PEM block: its base64 lines without the armour, joined by `joiner`. */
const pemBody = (pem: string, joiner = '\n') =>
  pem
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('-----'))
    .join(joiner);
const base64url = (text: string) => text.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

test('jwt({ secret }): a public key in every form it is published in is refused at creation (a PEM body without its armour as Keycloak serves it, base64/base64url SPKI, PKCS#1 and X.509 DER, raw or as text or its bytes, a JSON key array), and the HS256 token signed with that text never verifies (design §26)', async () => {
  const rsa = await testKey('RS256');
  const ec = await testKey('ES256');
  const ed = await testKey('EdDSA');
  // PKCS#1 RSAPublicKey is the bit string a 2048-bit RSA SubjectPublicKeyInfo ends with (270 bytes, SEQUENCE of 266).
  const pkcs1 = rsa.spki.slice(-270);
  assert.deepEqual([...pkcs1.subarray(0, 4)], [0x30, 0x82, 0x01, 0x0a]);
  const certificates = [idpKeys.rsaCertificate, idpKeys.ecCertificate];
  const forms: Record<string, string> = {};
  for (const [name, key] of [
    ['RSA', rsa],
    ['EC', ec],
    ['Ed25519', ed],
  ] as const) {
    forms[`${name} PEM body, its line breaks kept`] = pemBody(key.pem);
    forms[`${name} PEM body on one line (Keycloak's public_key)`] = pemBody(key.pem, '');
    forms[`${name} PEM body, CRLF line breaks`] = `${pemBody(key.pem, '\r\n')}\r\n`;
    forms[`${name} SPKI as base64url`] = base64url(pemBody(key.pem, ''));
  }
  forms['PKCS#1 as base64'] = base64(pkcs1);
  forms['PKCS#1 as base64url'] = base64url(base64(pkcs1));
  forms['PKCS#1 PEM body'] = pemBody(idpKeys.rsaPkcs1);
  for (const [i, certificate] of certificates.entries()) {
    forms[`certificate ${i} PEM body`] = pemBody(certificate);
    forms[`certificate ${i} as base64url`] = base64url(pemBody(certificate, ''));
  }
  forms["JSON array of JWKs (a key set's keys)"] = JSON.stringify([rsa.jwk, ec.jwk]);
  forms['JSON array of one JWK, indented'] = JSON.stringify([ed.jwk], null, 2);
  forms['JSON array of strings'] = '["a-json-array-is-no-key-0123456789abc"]';
  const fromBody = (pem: string) => Uint8Array.from(atob(pemBody(pem, '')), (c) => c.charCodeAt(0));
  const derForms: Record<string, Uint8Array<ArrayBuffer>> = {
    'RSA SPKI DER': rsa.spki,
    'EC SPKI DER': ec.spki,
    'Ed25519 SPKI DER (44 bytes)': ed.spki,
    'PKCS#1 DER': pkcs1,
    'PKCS#1 DER (openssl)': fromBody(idpKeys.rsaPkcs1),
    'certificate DER (RSA)': fromBody(idpKeys.rsaCertificate),
    'certificate DER (EC)': fromBody(idpKeys.ecCertificate),
  };
  // With the key configured as it should be, the HS256 token made from the text is refused; as a secret, no entry is made at all.
  const forged = async (text: string) =>
    signToken(
      { alg: 'HS256' },
      claims({ iat: undefined, exp: Math.floor(Date.now() / 1000) + 600 }),
      await hmacSigner(text),
    );
  for (const [what, text] of Object.entries(forms)) {
    refused(() => jwt({ secret: text, issuer: ISSUER, audience: AUDIENCE }), KEY_SHAPED, [text, text.slice(0, 40)]);
    refused(() => jwt({ secret: encoder.encode(text), allowAnyAudience: true }), KEY_SHAPED);
    refused(() => jwt({ secret: text, algorithms: ['HS256'], allowAnyAudience: true }), KEY_SHAPED);
    const token = await forged(text);
    for (const key of [rsa, ec, ed]) {
      const entry = jwt({ publicKey: key.pem, issuer: ISSUER, audience: AUDIENCE });
      const answer = await routeAuth(entry)(
        new Request('https://a.example/', { headers: { authorization: `Bearer ${token}` } }),
      );
      assert.equal(answer.ok, false, `${what}: the forged HS256 token never verifies`);
    }
  }
  for (const [what, der] of Object.entries(derForms)) {
    assert.ok(der.length >= 32, what);
    refused(() => jwt({ secret: der, allowAnyAudience: true }), KEY_SHAPED);
    refused(() => jwt({ secret: base64(der), allowAnyAudience: true }), KEY_SHAPED);
    refused(() => jwt({ secret: encoder.encode(base64url(base64(der))), allowAnyAudience: true }), KEY_SHAPED);
  }
});

test('jwt({ secret }): random secrets of any length are accepted, as bytes, base64, base64url or hex text: the key forms are parsed as DER, not guessed (design §26)', () => {
  for (const length of [32, 33, 44, 48, 64, 91, 128, 256, 270, 294, 512]) {
    for (let round = 0; round < 8; round++) {
      const random = crypto.getRandomValues(new Uint8Array(length));
      // A random body behind a SEQUENCE header of the right length is still no key.
      const header =
        length < 128 ? [0x30, length] : length < 256 ? [0x30, 0x81, length] : [0x30, 0x82, length >> 8, length & 255];
      const sequence = Uint8Array.from([...header, ...crypto.getRandomValues(new Uint8Array(length))]);
      const hex = Array.from(random, (byte) => byte.toString(16).padStart(2, '0')).join('');
      // Base64url text that reads as an RSA modulus (256 or 512 bytes here, odd, top bit set, no small
      // factor: about 3 in 100 of them) is refused as an RSA JWK's n (design §26), tested above.
      const asModulus = isRsaModulusText(base64url(base64(random)));
      for (const secret of [
        random,
        sequence,
        base64(random),
        ...(asModulus ? [] : [base64url(base64(random))]),
        hex,
        encoder.encode(base64(random)),
      ]) {
        assert.doesNotThrow(() => jwt({ secret, allowAnyAudience: true }), `a random secret of ${length} bytes`);
      }
    }
  }
});

test("agentHandler() given a plain token string that cannot be a secret (an unset variable in a template gives 'undefined') refuses it at creation as apiToken() does, never answering 200 to Bearer undefined (design §26)", () => {
  const env: Record<string, string | undefined> = {}; // an environment without the variable
  const unset = env.AGENT_TOKEN;
  for (const [auth, rule] of [
    [`${unset}`, /^apiToken\(\): token is what an unset or mistyped variable turns into, not a secret$/],
    ['null', /is what an unset or mistyped variable turns into, not a secret/],
    ['short-token', /^apiToken\(\): token must be at least 16 characters \(got 11\)$/],
  ] as const) {
    refused(() => agentHandler(agent(), { auth }), rule, [auth]);
  }
});

test('missing values say what they got: apiToken(undefined), jwt({ secret: undefined }), introspection({ clientSecret: undefined }), routeAuth(undefined)', () => {
  for (const [value, got] of [
    [undefined, 'got undefined'],
    [null, 'got null'],
    ['', 'got an empty string'],
    [42, 'got a number'],
    ['not a b64token', 'got a string'],
  ] as const) {
    refused(
      () => apiToken(value as never),
      new RegExp(`^apiToken\\(\\): token must be a non-empty RFC 6750 b64token .*; ${got}$`),
      typeof value === 'string' && value !== '' ? [value] : [],
    );
  }
  refused(
    () => jwt({ secret: undefined, audience: 'a' }),
    /^jwt\(\): give exactly one key source: secret, publicKey or jwksUrl \(got secret undefined\)$/,
  );
  refused(
    () => jwt({ secret: null as never, audience: 'a' }),
    /^jwt\(\): secret must be a string or a Uint8Array; got null$/,
  );
  refused(() => jwt({ audience: 'a' }), /\(got none\)$/);
  refused(() => routeAuth(undefined as never), /^routeAuth\(\): auth must be .*; got undefined$/);
  refused(
    () => routeAuth([apiToken(TOKEN_A), undefined as never]),
    /^routeAuth\(\): entry 1 of the auth list is not a function; got undefined$/,
  );
  refused(
    () =>
      introspection({
        endpoint: 'https://id.example/introspect',
        clientId: 'rs',
        clientSecret: undefined as never,
        audience: 'a',
      }),
    /^introspection\(\): clientSecret must be a non-empty string; got undefined$/,
  );
  refused(() => basic({ users: undefined as never }), /^basic\(\): users must be .*; got undefined$/);
  refused(
    () => basic({ users: { ada: undefined as never } }),
    /^basic\(\): the password of a user must be a string; got undefined$/,
  );
  refused(
    () => oidc({ issuer: undefined as never, audience: 'a' }),
    /^oidc\(\): issuer is required \(a non-empty string\); got undefined$/,
  );
});

test("agentHandler(): an auth key holding undefined, null or '' is an error naming the likely cause; omitting auth keeps the open route", async () => {
  for (const [value, shown] of [
    [undefined, 'undefined'],
    [null, 'null'],
    ['', 'an empty string'],
  ] as const) {
    refused(
      () => agentHandler(agent(), { basePath: '/agent', auth: value as never }),
      new RegExp(
        `^agentHandler\\(\\): auth is ${shown}: an unset environment variable\\? Omit auth for an open route, or use anonymous\\(\\)$`,
      ),
    );
  }
  // `auth: process.env.X` with X unset, as written by a user.
  const env: Record<string, string | undefined> = {};
  refused(
    () => agentHandler(agent(), { basePath: '/agent', auth: env.AGENT_TOKEN }),
    /auth is undefined: an unset environment variable\?/,
  );
  const open = agentHandler(agent(), { basePath: '/agent' });
  assert.equal((await send(open)).status, 200, "the specification's open route, asked for by leaving auth out");
});

test('option objects are plain: a prototype other than Object.prototype or null is refused at creation, so an inherited key is neither missed nor read', async () => {
  const inherited = (proto: object, own: Record<string, unknown> = {}) => Object.assign(Object.create(proto), own);
  // The two cases of the review: an inherited misspelling, and an inherited allowAnyAudience.
  refused(
    () => agentHandler(agent(), inherited({ atuh: TOKEN_A })),
    /^agentHandler\(\): options must be a plain object/,
  );
  refused(
    () => jwt(Object.create({ allowAnyAudience: true }, { secret: { value: 'y'.repeat(40), enumerable: true } })),
    /^jwt\(\): options must be a plain object/,
  );
  const secret = 'z'.repeat(40);
  const cases: [string, () => unknown, RegExp][] = [
    ['jwt', () => jwt(inherited({ issuer: ISSUER }, { secret, audience: 'a' })), /^jwt\(\)/],
    ['jwt cache', () => jwt({ secret, audience: 'a', cache: inherited({ maxEntries: 5 }) }), /^jwt\(\): cache/],
    ['oidc', () => oidc(inherited({}, { issuer: 'https://id.example.com', audience: 'a' })), /^oidc\(\)/],
    ['basic', () => basic(inherited({ realm: 'x' }, { users: { ada: 'pw-0123456789' } })), /^basic\(\)/],
    ['apiToken', () => apiToken(TOKEN_A, inherited({ id: 'admin' })), /^apiToken\(\)/],
    ['routeAuth', () => routeAuth(apiToken(TOKEN_A), inherited({})), /^routeAuth\(\)/],
    [
      'introspection',
      () =>
        introspection(
          inherited(
            { allowAnyAudience: true },
            { endpoint: 'https://id.example/i', clientId: 'rs', clientSecret: 's' },
          ),
        ),
      /^introspection\(\)/,
    ],
    [
      'introspection cache',
      () =>
        introspection({
          endpoint: 'https://id.example/i',
          clientId: 'rs',
          clientSecret: 's',
          audience: 'a',
          cache: inherited({ maxAgeSec: 3600 }),
        }),
      /^introspection\(\): cache/,
    ],
    [
      'protectedResourceMetadata',
      () =>
        protectedResourceMetadata(
          inherited({}, { resource: 'https://a.example/agent', authorizationServers: ['https://id.example.com'] }),
        ),
      /^protectedResourceMetadata\(\)/,
    ],
    [
      'agentHandler mcp',
      () => agentHandler(agent(), { auth: TOKEN_A, mcp: inherited({ allowedOrigins: ['https://evil.example'] }) }),
      /^agentHandler\(\): mcp/,
    ],
    [
      'agentHandler mcp.scopes',
      () => agentHandler(agent(), { auth: TOKEN_A, mcp: { scopes: inherited({ ask: ['a'] }) } }),
      /^agentHandler\(\): mcp\.scopes/,
    ],
    [
      'agentHandler scopes',
      () => agentHandler(agent(), { auth: TOKEN_A, scopes: inherited({ send: ['a'] }) }),
      /^agentHandler\(\): scopes/,
    ],
    [
      'agentHandler protectedResource',
      () =>
        agentHandler(agent(), {
          auth: TOKEN_A,
          protectedResource: inherited({
            resource: 'https://a.example/agent',
            authorizationServers: ['https://id.example.com'],
          }),
        }),
      /^agentHandler\(\): protectedResource/,
    ],
  ];
  for (const [what, create, helper] of cases) {
    assert.throws(
      create,
      (error: unknown) =>
        error instanceof AuthConfigError &&
        helper.test(error.message) &&
        /options must be a plain object/.test(error.message),
      what,
    );
  }
  // The other factories refuse them with the same error (design §30).
  const client = {
    query: async () => ({ rows: [] }),
    connect: async () => ({ query: async () => ({ rows: [] }), release() {} }),
  };
  const factories: [string, () => unknown][] = [
    ['createAgent()', () => createAgent(inherited({ sessions: 'owned' }, { name: 'a', model: echoModel() }))],
    [
      'createAgent(): limits',
      () => createAgent({ name: 'a', model: echoModel(), limits: inherited({ sessionBytes: 1 }) }),
    ],
    [
      'createAgent(): memory',
      () => createAgent({ name: 'a', model: echoModel(), memory: inherited({ scope: () => 'x' }) }),
    ],
    [
      'openAICompatible()',
      () => openAICompatible(inherited({ apiKey: 'sk' }, { baseURL: 'https://api.example.com/v1', model: 'm' })),
    ],
    ['postgresStore()', () => postgresStore(inherited({ schema: 'x' }, { client }))],
    ['postgresReplayStore()', () => postgresReplayStore(inherited({ schema: 'x' }, { client }))],
    ['memoryStore()', () => memoryStore(inherited({ maxSessions: 1 }))],
  ];
  for (const [factory, create] of factories) {
    assert.throws(
      create,
      (error: unknown) =>
        error instanceof AuthConfigError && error.message.startsWith(`${factory}: options must be a plain object`),
      factory,
    );
  }
  await assert.rejects(
    agent().send('hi', inherited({ principal: { id: 'admin', type: 'user' } })),
    (error: unknown) => error instanceof AgentError && error.code === 'INVALID_INPUT',
  );
  // Objects without a prototype, and plain literals, are options as before.
  assert.doesNotThrow(() => jwt(Object.assign(Object.create(null), { secret, audience: 'a' })));
  assert.doesNotThrow(() => agentHandler(agent(), Object.assign(Object.create(null), { auth: TOKEN_A })));
});

test('one principal, one caller: two apiToken() entries of one id (the default "api-token" included) are refused at creation', async () => {
  const ownId = /give each token its own id/;
  refused(() => routeAuth([apiToken(TOKEN_A), apiToken(TOKEN_B)]), ownId, [TOKEN_A, TOKEN_B]);
  refused(
    () =>
      routeAuth([
        apiToken(TOKEN_A, { id: 'ci' }),
        basic({ users: { ada: 'pw-0123456789' } }),
        apiToken(TOKEN_B, { id: 'ci' }),
      ]),
    /two apiToken\(\) entries have the id "ci"/,
  );
  refused(() => agentHandler(agent(), { auth: [apiToken(TOKEN_A), apiToken(TOKEN_B, { id: 'api-token' })] }), ownId);
  // Their own ids: two principals, each token its own.
  const handler = agentHandler(agent(), {
    basePath: '/agent',
    auth: [apiToken(TOKEN_A, { id: 'ci' }), apiToken(TOKEN_B)],
  });
  assert.equal((await send(handler, { authorization: `Bearer ${TOKEN_A}` })).status, 200);
  assert.equal((await send(handler, { authorization: `Bearer ${TOKEN_B}` })).status, 200);
});

test("DPoP algorithms have one source: the document takes the entries' list, and a given list that disagrees is an error where both are seen", async () => {
  const key = await testKey('ES256');
  const resource = { resource: 'https://agent.example.com/agent', authorizationServers: ['https://id.example.com'] };
  const dpopEntry = (options: Record<string, unknown> = {}): AuthFn =>
    jwt({
      publicKey: key.jwk,
      issuer: ISSUER,
      audience: AUDIENCE,
      dpop: 'allowed',
      dpopAlgorithms: ['ES256', 'EdDSA'],
      ...options,
    });
  const documentOf = async (handler: (request: Request) => Promise<Response>) =>
    (await (
      await handler(new Request('https://agent.example.com/.well-known/oauth-protected-resource/agent'))
    ).json()) as Record<string, unknown>;

  // Not given: the document lists what the 401 advertises.
  const handler = agentHandler(agent(), { basePath: '/agent', auth: [dpopEntry()], protectedResource: resource });
  assert.deepEqual((await documentOf(handler)).dpop_signing_alg_values_supported, ['ES256', 'EdDSA']);
  const refusal = await send(handler);
  assert.ok(wwwAuthenticateLines(refusal)!.includes('DPoP algs="ES256 EdDSA"'));
  // Given and the same (in any order): fine. Given and different: an error at agentHandler().
  assert.doesNotThrow(() =>
    agentHandler(agent(), {
      auth: [dpopEntry()],
      protectedResource: { ...resource, dpopSigningAlgValuesSupported: ['EdDSA', 'ES256'] },
    }),
  );
  refused(
    () =>
      agentHandler(agent(), {
        auth: [dpopEntry()],
        protectedResource: { ...resource, dpopSigningAlgValuesSupported: ['ES256'] },
      }),
    /^agentHandler\(\): the DPoP algorithms its entries advertise \(ES256, EdDSA\) are not the protected resource document's dpopSigningAlgValuesSupported \(ES256\)/,
  );
  // An entry given the document object sees both: jwt() itself refuses a list that disagrees.
  const strict = protectedResourceMetadata({ ...resource, dpopSigningAlgValuesSupported: ['RS256'] });
  refused(() => dpopEntry({ resourceMetadata: strict }), /^jwt\(\): the DPoP algorithms/);
  refused(
    () => oidc({ issuer: 'https://id.example.com', audience: AUDIENCE, dpop: 'required', resourceMetadata: strict }),
    /^oidc\(\): the DPoP algorithms/,
  );
  // ...and lists its entries' algorithms in a document that names none.
  const learning = protectedResourceMetadata(resource);
  dpopEntry({ resourceMetadata: learning, dpopAlgorithms: ['EdDSA'] });
  const served = (await learning.respond(new Request(learning.url))!.json()) as Record<string, unknown>;
  assert.deepEqual(served.dpop_signing_alg_values_supported, ['EdDSA']);
  // Entries that do not advertise DPoP leave the document as it was.
  const plain = protectedResourceMetadata(resource);
  jwt({ publicKey: key.jwk, issuer: ISSUER, audience: AUDIENCE, resourceMetadata: plain });
  assert.equal(
    ((await plain.respond(new Request(plain.url))!.json()) as Record<string, unknown>)
      .dpop_signing_alg_values_supported,
    undefined,
  );
});

test('the AuthConfigError of a key-shaped secret names the helper and the option (assertConfigError)', () => {
  assertConfigError(
    () => jwt({ secret: '{"kty":"oct","k":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}', audience: 'a' }),
    'jwt()',
    'an oct JWK as the secret',
  );
});
