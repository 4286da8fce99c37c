// Spec "apiToken()", "Route handler auth option"; design §3 (credential parsing, apiToken()).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiToken, AuthConfigError, authEntries, jwt, routeAuth, type Refusal } from '../../src/auth/index.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { bearerRequest, requestWith } from '../helpers/requests.ts';

const TOKEN = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';

test('apiToken() accepts only the exact token; principal { id: "api-token", type: "service", authenticator: "api-token" }, frozen', async () => {
  const entry = apiToken(TOKEN);
  const principal = await entry(bearerRequest(TOKEN));
  assert.deepEqual(principal, { id: 'api-token', type: 'service', authenticator: 'api-token' });
  assert.ok(Object.isFrozen(principal));
});

test('apiToken(token, { id }) names the principal id', async () => {
  assert.deepEqual(await apiToken(TOKEN, { id: 'ci-bot' })(bearerRequest(TOKEN)), {
    id: 'ci-bot',
    type: 'service',
    authenticator: 'api-token',
  });
  assert.deepEqual(await apiToken(TOKEN, {})(bearerRequest(TOKEN)), {
    id: 'api-token',
    type: 'service',
    authenticator: 'api-token',
  });
});

test('apiToken() skips every token that is not exactly the configured one (never throws)', async () => {
  const entry = apiToken(TOKEN);
  const others = [
    TOKEN.slice(0, -1),
    `${TOKEN}x`,
    `${TOKEN}=`,
    `x${TOKEN}`,
    TOKEN.toUpperCase(),
    TOKEN.toLowerCase(),
    `X${TOKEN.slice(1)}`,
    `${TOKEN.slice(0, -1)}X`,
    TOKEN.slice(0, 1),
    TOKEN + TOKEN,
  ];
  for (const token of others) assert.equal(await entry(bearerRequest(token)), null, token);
  assert.equal((await routeAuth(entry)(bearerRequest(TOKEN.slice(0, -1)))).ok, false);
});

test('apiToken(): the Bearer scheme is case-insensitive and may be followed by several spaces', async () => {
  const entry = apiToken(TOKEN);
  for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
    assert.equal((await entry(requestWith(`${scheme} ${TOKEN}`)))?.id, 'api-token', scheme);
  }
  assert.equal((await entry(requestWith(`Bearer     ${TOKEN}`)))?.id, 'api-token', 'several spaces');
});

test('apiToken(): anything but `Bearer <token>` skips (other scheme, no space, tab, extra text, no header)', async () => {
  const entry = apiToken(TOKEN);
  const values = [
    TOKEN,
    `Basic ${TOKEN}`,
    `Token ${TOKEN}`,
    `Bearer${TOKEN}`,
    `Bearer\t${TOKEN}`,
    `Bearer ${TOKEN} extra`,
    `Bearer ${TOKEN},`,
    `Bearer "${TOKEN}"`,
    `Bearer Bearer ${TOKEN}`,
    `Bearer ${TOKEN}, Bearer ${TOKEN}`,
    `Bearers ${TOKEN}`,
    'Bearer',
  ];
  for (const value of values) assert.equal(await entry(requestWith(value)), null, value);
  assert.equal(await entry(requestWith()), null, 'no Authorization header');
});

test('apiToken() accepts tokens using the whole b64token alphabet, with trailing "="', async () => {
  const token = 'AZaz09-._~+/AZaz09==';
  const entry = apiToken(token);
  assert.equal((await entry(bearerRequest(token)))?.id, 'api-token');
  assert.equal(await entry(bearerRequest('AZaz09-._~+/AZaz09=')), null);
});

test('apiToken(): an Authorization value over 16 KiB is skipped without parsing', async () => {
  const prefix = 'Bearer '.length;
  const fits = 'a'.repeat(16 * 1024 - prefix);
  const over = 'a'.repeat(16 * 1024 - prefix + 1);
  assert.equal((await apiToken(fits)(bearerRequest(fits)))?.id, 'api-token', 'exactly 16 KiB is read');
  assert.equal(await apiToken(over)(bearerRequest(over)), null, 'one character over 16 KiB skips');
});

test('a plain token string given as auth means apiToken(token)', async () => {
  const result = await routeAuth(TOKEN)(bearerRequest(TOKEN));
  assert.ok(result.ok);
  assert.deepEqual(result.principal, { id: 'api-token', type: 'service', authenticator: 'api-token' });
});

test('apiToken() configuration errors (AGENT_AUTH_CONFIG_INVALID at creation, never echoing the token)', () => {
  const cases: [string, () => unknown, string?][] = [
    ['an empty token', () => apiToken('')],
    ['a token with a space', () => apiToken('secret token-value'), 'secret token-value'],
    ['a token with a comma', () => apiToken('secret,tokenvalue'), 'secret,tokenvalue'],
    ['a token with a quote', () => apiToken('"secrettokenvalue"'), 'secrettokenvalue'],
    ['a token with "=" inside', () => apiToken('secret=tokenvalue'), 'secret=tokenvalue'],
    ['a token starting with "="', () => apiToken('=secrettokenvalue'), 'secrettokenvalue'],
    ['a token outside ASCII', () => apiToken('s\u00e9cret-token-value'), 's\u00e9cret-token-value'],
    ['a token with a control character', () => apiToken('secret\ttokenvalue'), 'tokenvalue'],
    ['a non-string token', () => apiToken(12345678 as never), '12345678'],
    ['no token', () => (apiToken as (...args: unknown[]) => unknown)()],
    ['an empty id', () => apiToken(TOKEN, { id: '' }), TOKEN],
    ['a non-string id', () => apiToken(TOKEN, { id: 42 as never }), TOKEN],
  ];
  for (const [what, create, secret] of cases)
    assertConfigError(create, 'apiToken()', what, secret === undefined ? [] : [secret]);
});

test('apiToken() refuses a token that cannot be a secret: under 16 characters, or a word an unset or mistyped variable turns into, whatever its case; a plain token string as auth gets the same rules (design §26)', () => {
  const refusedWith = (token: string, rule: RegExp) => {
    for (const create of [() => apiToken(token), () => routeAuth(token), () => authEntries(token)]) {
      assert.throws(
        create,
        (error: unknown) => {
          assert.ok(error instanceof AuthConfigError);
          assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
          assert.match(error.message, rule);
          // (A token of one to three letters is in any sentence.)
          if (token.length > 3)
            assert.ok(!error.message.toLowerCase().includes(token.toLowerCase()), 'the message never holds the token');
          return true;
        },
        token,
      );
    }
  };
  for (const word of [
    'undefined',
    'UNDEFINED',
    'Undefined',
    'null',
    'NULL',
    'NaN',
    'nan',
    'true',
    'True',
    'false',
    'FALSE',
  ]) {
    refusedWith(word, /^apiToken\(\): token is what an unset or mistyped variable turns into, not a secret$/);
  }
  // `${{}}`: not a b64token either, and refused as such.
  assert.throws(() => apiToken('[object Object]'), AuthConfigError);
  assert.throws(() => routeAuth(`${{}}`), AuthConfigError);
  for (const token of ['a', 'tok', 'good-token', 'k3Yx9QmZ2p', 'fifteen-chars-x']) {
    refusedWith(token, new RegExp(`^apiToken\\(\\): token must be at least 16 characters \\(got ${token.length}\\)$`));
  }
  // Sixteen characters is enough, and a word inside a longer token is no word.
  for (const token of ['sixteen-chars-xx', 'undefined-but-longer', 'nullnullnullnull']) {
    assert.doesNotThrow(() => apiToken(token));
    assert.doesNotThrow(() => routeAuth(token));
  }
});

test('onRefused hears a wrong static API token as mismatch, not signature; a malformed one as malformed; a JWT that fails its signature in the same list stays signature (design §31)', async () => {
  const heard = async (auth: Parameters<typeof routeAuth>[0], token: string) => {
    const refusals: Refusal[] = [];
    const result = await routeAuth(auth, { onRefused: (refusal) => void refusals.push(refusal) })(bearerRequest(token));
    assert.equal(result.ok, false);
    return refusals.map(({ entry, reason }) => `${entry} ${reason}`);
  };
  assert.deepEqual(await heard(apiToken(TOKEN), `${TOKEN}x`), ['apiToken mismatch']);
  assert.deepEqual(await heard(TOKEN, 'another-token-entirely'), ['apiToken mismatch']);
  assert.deepEqual(await heard(apiToken(TOKEN), 'not,a,b64token'), ['apiToken malformed']);
  // A JWT whose signature is wrong got further in jwt() than in apiToken(): jwt's reason is told.
  const secret = 'a-jwt-secret-of-at-least-32-bytes-0123456789';
  const header = btoa('{"alg":"HS256"}').replace(/=+$/, '');
  const payload = btoa('{"sub":"a","exp":9999999999}').replace(/=+$/, '');
  const forged = `${header}.${payload}.${'A'.repeat(43)}`;
  assert.deepEqual(await heard([apiToken(TOKEN), jwt({ secret, allowAnyAudience: true })], forged), ['jwt signature']);
});

test('apiToken() advertises the Bearer challenge', () => {
  assert.deepEqual(apiToken(TOKEN).challenges, [{ scheme: 'Bearer' }]);
});
