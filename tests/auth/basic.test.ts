// Spec "basic()", rule 5 and 6 of "Evaluation of the auth list"; design §3 (credential parsing, basic()).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthConfigError, basic, routeAuth, type AuthFn } from '../../src/auth/index.ts';
import { assertConfigError } from '../helpers/config-error.ts';
import { base64, basicAuthorization, basicRequest, requestWith } from '../helpers/requests.ts';

const PASSWORD = 'Sup3r-Secret!pw';
const bytes = (...parts: (string | number[])[]) =>
  Uint8Array.from(parts.flatMap((part) => (typeof part === 'string' ? [...new TextEncoder().encode(part)] : part)));

/** A verifier that accepts everything and records its calls: a request that reaches it was parsed. */
function acceptAll(): { entry: AuthFn; calls: [string, string][] } {
  const calls: [string, string][] = [];
  return {
    calls,
    entry: basic({
      users: (user, password) => {
        calls.push([user, password]);
        return true;
      },
    }),
  };
}

test('basic() accepts a configured user and password; principal { id: user name, type: "user", authenticator: "basic" }, frozen', async () => {
  const entry = basic({ users: { ada: PASSWORD, grace: 'grace-hopper-1906' } });
  const principal = await entry(basicRequest('ada', PASSWORD));
  assert.deepEqual(principal, { id: 'ada', type: 'user', authenticator: 'basic' });
  assert.ok(Object.isFrozen(principal));
  assert.deepEqual(await entry(basicRequest('grace', 'grace-hopper-1906')), {
    id: 'grace',
    type: 'user',
    authenticator: 'basic',
  });
});

test("basic() skips a wrong password, an unknown user, and another user's password (never throws)", async () => {
  const entry = basic({ users: { ada: PASSWORD, grace: 'grace-hopper-1906' } });
  for (const [user, password] of [
    ['ada', 'wrong'],
    ['ada', ''],
    ['ada', `${PASSWORD}x`],
    ['ada', PASSWORD.slice(0, -1)],
    ['eve', PASSWORD],
    ['ADA', PASSWORD],
    ['ada', 'grace-hopper-1906'],
    ['grace', PASSWORD],
  ] as const) {
    assert.equal(await entry(basicRequest(user, password)), null, `${user}:${password}`);
  }
  assert.equal((await routeAuth(entry)(basicRequest('ada', 'wrong'))).ok, false);
});

test('basic() with 100 users gives each user its own principal, and only with its own password', async () => {
  const users: Record<string, string> = {};
  for (let i = 0; i < 100; i++) users[`user${i}`] = `password-${i}`;
  const entry = basic({ users });
  for (let i = 0; i < 100; i++) {
    assert.deepEqual(await entry(basicRequest(`user${i}`, `password-${i}`)), {
      id: `user${i}`,
      type: 'user',
      authenticator: 'basic',
    });
    assert.equal(await entry(basicRequest(`user${i}`, `password-${(i + 1) % 100}`)), null);
  }
});

test('basic(): the Basic scheme name is case-insensitive and may be followed by several spaces', async () => {
  const entry = basic({ users: { ada: PASSWORD } });
  const encoded = basicAuthorization('ada', PASSWORD).slice('Basic '.length);
  for (const authorization of [`basic ${encoded}`, `BASIC ${encoded}`, `bAsIc ${encoded}`, `Basic    ${encoded}`]) {
    assert.deepEqual(
      await entry(requestWith(authorization)),
      { id: 'ada', type: 'user', authenticator: 'basic' },
      authorization,
    );
  }
});

test('basic(): user-id and password are split at the first colon (RFC 7617); the password may hold colons', async () => {
  const { entry, calls } = acceptAll();
  await entry(basicRequest('ada', 'p:a:ss:word'));
  assert.deepEqual(calls, [['ada', 'p:a:ss:word']]);
  const mapped = basic({ users: { ada: 'p:a:ss:word' } });
  assert.equal((await mapped(basicRequest('ada', 'p:a:ss:word')))?.id, 'ada');
});

test('basic(): malformed credentials (bad base64, missing colon, invalid UTF-8, empty user) all skip, never throw', async () => {
  const valid = base64(bytes('ada:pw'));
  const malformed: [string, string][] = [
    ['no credentials', 'Basic'],
    ['only spaces after the scheme', 'Basic    '],
    ['not base64', 'Basic !!!!'],
    ['base64 missing its padding', `Basic ${base64(bytes('ada:p')).replace(/=+$/, '')}`],
    ['base64 with too much padding', `Basic ${valid}==`],
    ['base64url alphabet', `Basic ${base64(bytes('ada:pw>>>???')).replace('+', '-').replace('/', '_')}`],
    ['a space inside the base64', `Basic ${valid.slice(0, 4)} ${valid.slice(4)}`],
    ['a tab after the scheme', `Basic\t${valid}`],
    ['trailing text', `Basic ${valid} extra`],
    ['two credentials', `Basic ${valid}, Basic ${valid}`],
    ['missing colon', `Basic ${base64(bytes('adapw'))}`],
    ['empty user', `Basic ${base64(bytes(':pw'))}`],
    ['empty user and password', `Basic ${base64(bytes(':'))}`],
    ['invalid UTF-8 in the password', `Basic ${base64(bytes('ada:', [0xff, 0xfe]))}`],
    ['invalid UTF-8 in the user', `Basic ${base64(bytes([0xc3, 0x28], ':pw'))}`],
    ['overlong UTF-8', `Basic ${base64(bytes([0xc0, 0xaf], ':pw'))}`],
    ['UTF-8 encoded surrogate', `Basic ${base64(bytes([0xed, 0xa0, 0x80], ':pw'))}`],
    ['truncated UTF-8', `Basic ${base64(bytes('ada:pw', [0xe2, 0x82]))}`],
    ['another scheme', `Bearer ${valid}`],
    ['a longer scheme name', `Basicx ${valid}`],
    ['the scheme without a space', `Basic${valid}`],
    ['the credentials without a scheme', valid],
  ];
  const { entry, calls } = acceptAll();
  const mapped = basic({ users: { ada: 'pw>>>???' } });
  for (const [what, authorization] of malformed) {
    assert.equal(await entry(requestWith(authorization)), null, what);
    assert.equal(await mapped(requestWith(authorization)), null, what);
  }
  assert.deepEqual(calls, [], 'no malformed credential reached the verifier');
  await entry(requestWith(`Basic ${base64(bytes('ada:pw>>>???'))}`));
  assert.deepEqual(calls, [['ada', 'pw>>>???']], 'the same credential in the standard alphabet is read');
  assert.equal(await entry(requestWith()), null, 'no Authorization header');
});

test('basic() NFC-normalizes: a user configured as composed "é" logs in with the decomposed form, password too', async () => {
  const composedUser = '\u00e9lodie',
    composedPassword = 'p\u00e4ssw\u00f6rd';
  const decomposedUser = 'e\u0301lodie',
    decomposedPassword = 'pa\u0308sswo\u0308rd';
  const entry = basic({ users: { [composedUser]: composedPassword } });
  assert.deepEqual(await entry(basicRequest(decomposedUser, decomposedPassword)), {
    id: composedUser,
    type: 'user',
    authenticator: 'basic',
  });
  assert.deepEqual(await entry(basicRequest(composedUser, decomposedPassword)), {
    id: composedUser,
    type: 'user',
    authenticator: 'basic',
  });
  assert.deepEqual(await entry(basicRequest(decomposedUser, composedPassword)), {
    id: composedUser,
    type: 'user',
    authenticator: 'basic',
  });
});

test('basic() NFC-normalizes the configuration: a user configured decomposed logs in composed; its id is the NFC form', async () => {
  const entry = basic({ users: new Map([['e\u0301', 'cafe\u0301-au-lait']]) });
  assert.deepEqual(await entry(basicRequest('\u00e9', 'caf\u00e9-au-lait')), {
    id: '\u00e9',
    type: 'user',
    authenticator: 'basic',
  });
});

test('basic() users as a Map', async () => {
  const entry = basic({
    users: new Map([
      ['ada', PASSWORD],
      ['grace', 'grace-hopper-1906'],
    ]),
  });
  assert.equal((await entry(basicRequest('grace', 'grace-hopper-1906')))?.id, 'grace');
  assert.equal(await entry(basicRequest('grace', PASSWORD)), null);
});

test('basic() users as a function (user, password) => boolean receives NFC-normalized values', async () => {
  const calls: [string, string][] = [];
  const entry = basic({
    users: (user, password) => {
      calls.push([user, password]);
      return user === 'ada' && password === 'caf\u00e9';
    },
  });
  assert.deepEqual(await entry(basicRequest('ada', 'cafe\u0301')), { id: 'ada', type: 'user', authenticator: 'basic' });
  assert.equal(await entry(basicRequest('ada', 'nope')), null);
  assert.deepEqual(calls, [
    ['ada', 'caf\u00e9'],
    ['ada', 'nope'],
  ]);
});

test('basic() users as an async function', async () => {
  const entry = basic({
    users: async (user, password) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return user === 'ada' && password === PASSWORD;
    },
  });
  assert.deepEqual(await entry(basicRequest('ada', PASSWORD)), { id: 'ada', type: 'user', authenticator: 'basic' });
  assert.equal(await entry(basicRequest('ada', 'wrong')), null);
  const principal = await routeAuth([entry])(basicRequest('ada', PASSWORD));
  assert.equal(principal.ok, true);
});

test('basic() configuration errors (AGENT_AUTH_CONFIG_INVALID at creation, never echoing a password)', () => {
  const cases: [string, unknown][] = [
    ['no options', undefined],
    ['users missing', {}],
    ['users empty', { users: {} }],
    ['users an empty Map', { users: new Map() }],
    ['a user name containing ":"', { users: { 'ada:x': PASSWORD } }],
    ['a user name containing ":" in a Map', { users: new Map([['a:b', PASSWORD]]) }],
    ['an empty user name', { users: new Map([['', PASSWORD]]) }],
    ['a non-string user name', { users: new Map<unknown, string>([[42, PASSWORD]]) }],
    ['a numeric password', { users: { ada: 12345 } }],
    ['an undefined password', { users: { ada: undefined } }],
    ['an object password', { users: { ada: { value: PASSWORD } } }],
    ['a null password in a Map', { users: new Map([['ada', null]]) }],
    ['users as a list', { users: [PASSWORD] }],
    ['users as a string', { users: PASSWORD }],
    ['two names equal after NFC', { users: { '\u00e9': PASSWORD, 'e\u0301': PASSWORD } }],
    ['a realm with a line feed', { users: { ada: PASSWORD }, realm: 'a\nb' }],
    ['a realm with NUL', { users: { ada: PASSWORD }, realm: 'a\u0000' }],
    ['a realm with a tab', { users: { ada: PASSWORD }, realm: 'a\tb' }],
    ['a realm with DEL', { users: { ada: PASSWORD }, realm: 'a\u007f' }],
    ['a realm with a C1 control', { users: { ada: PASSWORD }, realm: 'a\u0085' }],
    ['a realm outside Latin-1', { users: { ada: PASSWORD }, realm: '\u65e5\u672c' }],
    ['a non-string realm', { users: { ada: PASSWORD }, realm: 42 }],
  ];
  for (const [what, options] of cases)
    assertConfigError(() => basic(options as never), 'basic()', what, [PASSWORD, '12345']);
});

test('basic() accepts a realm with quotes and backslashes', async () => {
  const entry = basic({ users: { ada: PASSWORD }, realm: 'a "quoted" \\ realm' });
  assert.equal((await entry(basicRequest('ada', PASSWORD)))?.id, 'ada');
});

test('basic() refuses a configured password that cannot be a secret: under 8 characters (NIST SP 800-63B), or a word an unset or mistyped variable turns into, whatever its case (design §26)', () => {
  const refusedWith = (password: string, rule: RegExp) => {
    for (const users of [{ grace: PASSWORD, ada: password }, new Map([['ada', password]])]) {
      assert.throws(
        () => basic({ users }),
        (error: unknown) => {
          assert.ok(error instanceof AuthConfigError);
          assert.equal(error.code, 'AGENT_AUTH_CONFIG_INVALID');
          assert.match(error.message, rule);
          if (password !== '') assert.ok(!error.message.includes(password), 'the message never holds the password');
          return true;
        },
        password,
      );
    }
  };
  for (const word of [
    'undefined',
    'UNDEFINED',
    'null',
    'NaN',
    'nan',
    'true',
    'FALSE',
    '[object Object]',
    '[OBJECT OBJECT]',
  ]) {
    refusedWith(
      word,
      /^basic\(\): the password of "ada" is what an unset or mistyped variable turns into, not a secret$/,
    );
  }
  for (const password of ['', 'pw', 'hopper', 'seven77']) {
    refusedWith(
      password,
      new RegExp(`^basic\\(\\): the password of "ada" must be at least 8 characters \\(got ${password.length}\\)$`),
    );
  }
  // Characters, not bytes or UTF-16 units: eight emoji are eight characters, seven are seven.
  assert.doesNotThrow(() => basic({ users: { ada: '\u{1F511}'.repeat(8) } }));
  refusedWith('\u{1F511}'.repeat(7), /must be at least 8 characters \(got 7\)$/);
  for (const password of ['eight888', 'undefined-or-not', 'correct horse battery staple']) {
    assert.doesNotThrow(() => basic({ users: { ada: password } }));
  }
  // A verifier function checks its own passwords.
  assert.doesNotThrow(() => basic({ users: () => false }));
});

/** A request of `method` to the route with ada's credentials and `headers` (what a browser adds). */
function browserRequest(method: string, headers: Record<string, string>): Request {
  const request = basicRequest('ada', PASSWORD);
  const all = new Headers(request.headers);
  for (const [name, value] of Object.entries(headers)) all.set(name, value);
  return new Request(request.url, { method, headers: all, ...(method === 'POST' && { body: '{}' }) });
}

test("basic(): a browser's cross-site POST skips whatever its credentials (Sec-Fetch-Site, else Origin against the host); same-origin, direct and safe requests are accepted (design §20)", async () => {
  const entry = basic({ users: { ada: PASSWORD } });
  const verifier = basic({ users: (user, password) => user === 'ada' && password === PASSWORD });
  const own = new URL(basicRequest('ada', PASSWORD).url).origin;
  const refused: [string, Record<string, string>][] = [
    ['POST', { 'sec-fetch-site': 'cross-site' }],
    ['POST', { 'sec-fetch-site': 'same-site' }],
    ['DELETE', { 'sec-fetch-site': 'cross-site' }],
    ['PUT', { 'sec-fetch-site': 'cross-site', origin: own }], // Sec-Fetch-Site is the browser's own word
    ['POST', { origin: 'https://evil.example' }],
    ['POST', { origin: 'null' }],
    ['POST', { origin: 'not an origin' }],
  ];
  const accepted: [string, Record<string, string>][] = [
    ['POST', {}], // a program: neither header
    ['POST', { 'sec-fetch-site': 'same-origin' }],
    ['POST', { 'sec-fetch-site': 'none' }], // typed in the address bar, a bookmark
    ['POST', { origin: own }],
    ['GET', { 'sec-fetch-site': 'cross-site' }],
    ['HEAD', { origin: 'https://evil.example' }],
    ['OPTIONS', { 'sec-fetch-site': 'cross-site' }],
  ];
  for (const candidate of [entry, verifier]) {
    for (const [method, headers] of refused)
      assert.equal(await candidate(browserRequest(method, headers)), null, `${method} ${JSON.stringify(headers)}`);
    for (const [method, headers] of accepted) {
      assert.deepEqual(
        await candidate(browserRequest(method, headers)),
        { id: 'ada', type: 'user', authenticator: 'basic' },
        `${method} ${JSON.stringify(headers)}`,
      );
    }
  }
  // Through the list: the cross-site POST gets the list's 401, as any request whose entries skip.
  const result = await routeAuth([entry])(browserRequest('POST', { 'sec-fetch-site': 'cross-site' }));
  assert.equal(result.ok, false);
  assert.equal(!result.ok && result.response.status, 401);
});

test("basic(): without Sec-Fetch-Site, an https server's Origin must be https too: Origin http://<its host> skips, https://<its host> is accepted; an http server compares the host alone (design §20)", async () => {
  const entry = basic({ users: { ada: PASSWORD } });
  const at = (url: string, method: string, origin: string, host?: string) => {
    const headers = new Headers({ authorization: basicAuthorization('ada', PASSWORD), origin });
    if (host !== undefined) headers.set('host', host);
    return new Request(url, { method, headers, ...(method !== 'GET' && { body: '{}' }) });
  };
  const https = 'https://agent.example/agent';
  for (const method of ['POST', 'PUT', 'DELETE'])
    assert.equal(await entry(at(https, method, 'http://agent.example')), null, `${method} from http://agent.example`);
  // The Host header fallback (a proxy that rewrote the URL's host) does not let the scheme pass either.
  assert.equal(await entry(at(https, 'POST', 'http://public.example', 'public.example')), null);
  assert.equal(await entry(at(https, 'POST', 'http://agent.example:443')), null);
  for (const [url, origin, host] of [
    [https, 'https://agent.example', undefined],
    [https, 'https://public.example', 'public.example'],
    ['http://agent.example/agent', 'http://agent.example', undefined],
    ['http://127.0.0.1:3000/agent', 'http://127.0.0.1:3000', undefined],
  ] as const) {
    assert.equal((await entry(at(url, 'POST', origin, host)))?.id, 'ada', `${url} from ${origin}`);
  }
  // A safe method is never judged.
  assert.equal((await entry(at(https, 'GET', 'http://agent.example')))?.id, 'ada');
});
