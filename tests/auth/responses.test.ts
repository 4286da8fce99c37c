// Spec "Errors"; design §2 (challenges) and §4 (responses).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AuthConfigError,
  AuthError,
  anonymous,
  apiToken,
  basic,
  routeAuth,
  wwwAuthenticateLines,
  type AuthFn,
} from '../../src/auth/index.ts';
import { captureConsoleError } from '../helpers/console.ts';
import { requestWith } from '../helpers/requests.ts';

/** A custom entry that answers `outcome` and declares `challenges` (left absent when undefined). */
function custom(outcome: () => null | never, challenges?: AuthFn['challenges']): AuthFn {
  const entry: AuthFn = () => outcome();
  if (challenges !== undefined) entry.challenges = challenges;
  return entry;
}
const skip = () => null;

async function refuse(entries: readonly AuthFn[], request = requestWith()): Promise<Response> {
  const { result } = await captureConsoleError(() => routeAuth(entries)(request));
  assert.equal(result.ok, false);
  return (result as { response: Response }).response;
}

const cases: [status: number, body: string, entries: AuthFn[]][] = [
  [401, '{"error":"Unauthorized"}', [custom(skip)]],
  [
    401,
    '{"error":"Unauthorized"}',
    [
      custom(() => {
        throw new AuthError(401);
      }),
    ],
  ],
  [
    403,
    '{"error":"Forbidden"}',
    [
      custom(() => {
        throw new AuthError(403);
      }),
    ],
  ],
  [
    500,
    '{"error":"Internal Server Error"}',
    [
      custom(() => {
        throw new Error('bug');
      }),
    ],
  ],
];

test('auth responses have exactly the bodies {"error":"Unauthorized"}, {"error":"Forbidden"}, {"error":"Internal Server Error"}', async () => {
  for (const [status, body, entries] of cases) {
    const response = await refuse(entries);
    assert.equal(response.status, status);
    assert.equal(await response.text(), body);
  }
});

test('every auth response carries Content-Type: application/json and Cache-Control: no-store (401, 403, 500)', async () => {
  for (const [status, , entries] of cases) {
    const response = await refuse(entries);
    assert.equal(response.headers.get('content-type'), 'application/json', `content-type of ${status}`);
    assert.equal(response.headers.get('cache-control'), 'no-store', `cache-control of ${status}`);
  }
  const empty = await refuse([]);
  assert.equal(empty.headers.get('cache-control'), 'no-store');
});

test('403 and 500 carry no WWW-Authenticate', async () => {
  for (const [status, , entries] of cases.filter(([s]) => s !== 401)) {
    const response = await refuse([
      apiToken('tok-0123456789abcdef'),
      ...entries,
      basic({ users: { ada: 'pw-0123456789' } }),
    ]);
    assert.equal(response.status, status);
    assert.equal(response.headers.get('www-authenticate'), null);
    assert.deepEqual(wwwAuthenticateLines(response), []);
  }
});

test('401 carries one WWW-Authenticate per distinct challenge of the list, in list order', async () => {
  const entries = [
    custom(skip, [{ scheme: 'DPoP', realm: 'api' }]),
    apiToken('tok-0123456789abcdef'),
    basic({ users: { ada: 'pw-0123456789' }, realm: 'staff' }),
    custom(skip),
    basic({ users: { bob: 'pw-0123456789' }, realm: 'staff' }),
    custom(skip, [{ scheme: 'Bearer' }, { scheme: 'DPoP', realm: 'api' }, { scheme: 'Negotiate' }]),
    basic({ users: { eve: 'pw-0123456789' } }),
  ];
  const expected = [
    'DPoP realm="api"',
    'Bearer',
    'Basic realm="staff", charset="UTF-8"',
    'Negotiate',
    'Basic realm="agent", charset="UTF-8"',
  ];
  const response = await refuse(entries);
  assert.equal(response.status, 401);
  assert.deepEqual(wwwAuthenticateLines(response), expected);
  assert.equal(response.headers.get('www-authenticate'), expected.join(', '));
});

test('a 401 from AuthError(401) carries the challenges of the whole list', async () => {
  const response = await refuse([
    custom(() => {
      throw new AuthError(401);
    }, []),
    basic({ users: { ada: 'pw-0123456789' } }),
    apiToken('tok-0123456789abcdef'),
  ]);
  assert.deepEqual(wwwAuthenticateLines(response), ['Basic realm="agent", charset="UTF-8"', 'Bearer']);
});

test('basic() advertises Basic with its realm and charset="UTF-8"; default realm "agent"', async () => {
  assert.deepEqual(wwwAuthenticateLines(await refuse([basic({ users: { ada: 'pw-0123456789' } })])), [
    'Basic realm="agent", charset="UTF-8"',
  ]);
  assert.deepEqual(
    wwwAuthenticateLines(await refuse([basic({ users: { ada: 'pw-0123456789' }, realm: 'Agent Zone' })])),
    ['Basic realm="Agent Zone", charset="UTF-8"'],
  );
  const viaFunction = basic({ users: () => false, realm: 'fn' });
  assert.deepEqual(wwwAuthenticateLines(await refuse([viaFunction])), ['Basic realm="fn", charset="UTF-8"']);
});

test('a realm is written as an RFC 9110 quoted-string: " and \\ are escaped', async () => {
  const response = await refuse([basic({ users: { ada: 'pw-0123456789' }, realm: 'say "hi" \\ bye' })]);
  assert.deepEqual(wwwAuthenticateLines(response), ['Basic realm="say \\"hi\\" \\\\ bye", charset="UTF-8"']);
  const declared = await refuse([custom(skip, [{ scheme: 'Custom', realm: 'a"b\\c' }])]);
  assert.deepEqual(wwwAuthenticateLines(declared), ['Custom realm="a\\"b\\\\c"']);
});

test('apiToken() advertises Bearer', async () => {
  assert.deepEqual(wwwAuthenticateLines(await refuse([apiToken('tok-0123456789abcdef')])), ['Bearer']);
});

test('a custom entry advertises its declared challenges', async () => {
  const response = await refuse([custom(skip, [{ scheme: 'Signature', realm: 'hooks' }, { scheme: 'Token' }])]);
  assert.deepEqual(wwwAuthenticateLines(response), ['Signature realm="hooks"', 'Token']);
});

test('a custom entry that declares no challenges advertises Bearer', async () => {
  const response = await refuse([custom(skip)]);
  assert.deepEqual(wwwAuthenticateLines(response), ['Bearer']);
  assert.equal(response.headers.get('www-authenticate'), 'Bearer');
});

test('a custom entry with challenges: [] advertises nothing', async () => {
  const response = await refuse([custom(skip, [])]);
  assert.equal(response.status, 401);
  assert.equal(response.headers.get('www-authenticate'), null);
  assert.deepEqual(wwwAuthenticateLines(response), []);
});

test('anonymous() advertises no challenge', () => {
  assert.deepEqual(anonymous().challenges, []);
});

test('invalid challenge declarations are configuration errors at creation', () => {
  const invalid: unknown[] = [
    [{ scheme: 'Two words' }],
    [{ scheme: '' }],
    [{ scheme: 'Bearer', realm: 'line\nbreak' }],
    [{ scheme: 'Bearer', realm: 'nul\u0000' }],
    [{ scheme: 'Bearer', realm: 42 }],
    [{ realm: 'x' }],
    [null],
    'Bearer',
  ];
  for (const challenges of invalid) {
    assert.throws(
      () => routeAuth([custom(skip, challenges as AuthFn['challenges'])]),
      (error: unknown) => error instanceof AuthConfigError && error.code === 'AGENT_AUTH_CONFIG_INVALID',
    );
  }
});

test('each refusal is a new Response whose body can be read', async () => {
  const authenticate = routeAuth([apiToken('tok-0123456789abcdef')]);
  const first = await authenticate(requestWith());
  const second = await authenticate(requestWith());
  assert.ok(!first.ok && !second.ok);
  assert.notEqual(first.response, second.response);
  assert.equal(await first.response.text(), '{"error":"Unauthorized"}');
  assert.equal(await second.response.text(), '{"error":"Unauthorized"}');
});

test('wwwAuthenticateLines() is undefined for a response the auth layer did not build', () => {
  assert.equal(
    wwwAuthenticateLines(new Response('x', { status: 401, headers: { 'www-authenticate': 'Bearer' } })),
    undefined,
  );
});
