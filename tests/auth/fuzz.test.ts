// Spec rule 5 ("Built-in helpers never throw for a bad credential"); issue 2 "Bad input".
// Random and hostile Authorization values: every one skips, none throws. Seeded: a failure
// prints its seed; replay with TEST_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiToken, basic, routeAuth, type AuthFn } from '../../src/auth/index.ts';
import { captureConsoleError } from '../helpers/console.ts';
import { withSeed, type Random } from '../helpers/prng.ts';
import { base64, basicAuthorization, requestWith } from '../helpers/requests.ts';

const TOKEN = 'fuzz-Token_0123456789.abc~XYZ+/=';
const USERS = { ada: 'correct horse battery', '\u00e9lodie': 'caf\u00e9-cr\u00e8me' };
const ROUNDS = 1500;

const B64TOKEN_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/';
/** Latin-1 characters a `Headers` value may hold anywhere: all but NUL, CR and LF. */
const HEADER_CHARS = Array.from({ length: 255 }, (_, i) => String.fromCharCode(i + 1)).filter(
  (c) => c !== '\r' && c !== '\n',
);
const CONTROL_CHARS = HEADER_CHARS.filter((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
const SCHEMES = [
  'Basic',
  'Bearer',
  'basic',
  'BEARER',
  'Digest',
  'Negotiate',
  'Token',
  'Basic  ',
  'Bearer\t',
  'Bearer,',
  'Basic:',
  '',
];

const text = (random: Random, length: number, chars: readonly string[] = HEADER_CHARS) =>
  Array.from({ length }, () => random.pick(chars)).join('');

/** Replaces, deletes or inserts one character of `value`: never the same string again. */
function mutate(random: Random, value: string, chars: readonly string[]): string {
  const at = random.int(value.length);
  switch (random.int(3)) {
    case 0: {
      const others = chars.filter((c) => c !== value[at]);
      return value.slice(0, at) + random.pick(others) + value.slice(at + 1);
    }
    case 1:
      return value.slice(0, at) + value.slice(at + 1);
    default:
      return value.slice(0, at) + random.pick(chars) + value.slice(at);
  }
}

/** One hostile `Authorization` value; none of them holds a valid credential. */
const generators: ((random: Random) => string)[] = [
  (r) => text(r, r.int(300)),
  (r) => `${r.pick(SCHEMES)} ${text(r, r.int(300))}`,
  (r) => `${r.pick(SCHEMES)} ${base64(r.bytes(r.int(200)))}`,
  (r) => `Basic ${base64(r.bytes(11_000 + r.int(1_000)))}`,
  (r) => `${r.pick(['Basic', 'Bearer'])} ${'A'.repeat(16 * 1024 + r.int(4096))}`,
  (r) => `Basic ${base64(new TextEncoder().encode(`ada:${'x'.repeat(12_200 + r.int(400))}`))}`,
  (r) => {
    const valid = r.int(2) === 0 ? `Bearer ${TOKEN}` : basicAuthorization('ada', USERS.ada);
    const at = 1 + r.int(valid.length - 2);
    return valid.slice(0, at) + r.pick(CONTROL_CHARS) + valid.slice(at);
  },
  (r) => `${r.pick(['Basic', 'Bearer'])} ${','.repeat(1 + r.int(2000))}`,
  (r) =>
    Array.from({ length: 2 + r.int(50) }, () =>
      r.int(2) ? `Bearer ${TOKEN}` : basicAuthorization('ada', USERS.ada),
    ).join(r.pick([',', ', ', ' ,', ',,'])),
  (r) =>
    `${Array.from({ length: 2 + r.int(20) }, () => r.pick(['Bearer', 'Basic', 'bearer'])).join(' ')} ${r.int(2) ? TOKEN : basicAuthorization('ada', USERS.ada).slice(6)}`,
  (r) => `Bearer ${mutate(r, TOKEN, B64TOKEN_CHARS.split(''))}`,
  (r) =>
    basicAuthorization(
      r.pick(['ada', '\u00e9lodie', 'e\u0301lodie']),
      mutate(r, r.pick(Object.values(USERS)), HEADER_CHARS),
    ),
  (r) =>
    basicAuthorization(
      mutate(
        r,
        'ada',
        HEADER_CHARS.filter((c) => c !== ':'),
      ),
      USERS.ada,
    ),
  (r) =>
    basicAuthorization(
      text(r, r.int(40), [...HEADER_CHARS, '\u{1F600}', '\u0301', '\ufffd']),
      text(r, r.int(40), [...HEADER_CHARS, '\u{1F600}']),
    ),
  (r) => `Basic ${base64(r.bytes(r.int(60)))}${r.pick(['', '=', '==', '===', ' ', '.'])}`,
  (r) => `Bearer ${TOKEN}${r.pick(['=', ' =', ',', ';', '"', '\t=', ' x', '\u00a0'])}`, // a trailing tab alone would be trimmed by Headers
  (r) =>
    `${r.pick(['Bearer', 'Basic'])}${r.pick(['', '\t', '\u00a0', '\u000b', '\u000c', ':', '='])}${r.int(2) ? TOKEN : basicAuthorization('ada', USERS.ada).slice(6)}`,
];

function entries(): [[string, AuthFn], [string, AuthFn], [string, AuthFn]] {
  return [
    ['basic() with a map', basic({ users: USERS })],
    [
      'basic() with a function',
      basic({ users: async (user, password) => USERS[user as keyof typeof USERS] === password }),
    ],
    ['apiToken()', apiToken(TOKEN)],
  ];
}

test('fuzz: random and hostile Authorization values make basic() and apiToken() skip, never throw', async () => {
  await withSeed(async (random) => {
    const helpers = entries();
    const authenticate = routeAuth(helpers.map(([, entry]) => entry));
    let sent = 0;
    let refusedByHeaders = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const which = round % generators.length;
      const value = generators[which]!(random);
      let request: Request;
      try {
        request = requestWith(value);
      } catch {
        refusedByHeaders++; // a value fetch itself refuses (a character above U+00FF) never reaches a helper
        continue;
      }
      sent++;
      for (const [name, entry] of helpers) {
        let outcome: unknown;
        try {
          outcome = await entry(request);
        } catch (error) {
          assert.fail(
            `${name} threw ${String(error)} for generator ${which}, value ${JSON.stringify(value.slice(0, 200))}`,
          );
        }
        assert.equal(
          outcome ?? null,
          null,
          `${name} accepted generator ${which}, value ${JSON.stringify(value.slice(0, 200))}`,
        );
      }
      const { result, calls } = await captureConsoleError(() => authenticate(request));
      assert.equal(result.ok ? 200 : result.response.status, 401, `the list answers 401 for generator ${which}`);
      assert.equal(calls.length, 0, 'nothing was logged (no entry threw)');
    }
    assert.ok(
      sent >= ROUNDS * 0.9,
      `most values reach the helpers (${sent} sent, ${refusedByHeaders} refused by Headers)`,
    );
  });
});

test('fuzz: the valid credentials the generators mutate are accepted (the fuzz would see a mutation that still matched)', async () => {
  const [[, basicMap], [, basicFunction], [, token]] = entries();
  assert.equal((await basicMap(requestWith(basicAuthorization('ada', USERS.ada))))?.id, 'ada');
  assert.equal(
    (await basicFunction(requestWith(basicAuthorization('\u00e9lodie', USERS['\u00e9lodie']))))?.id,
    '\u00e9lodie',
  );
  assert.equal((await token(requestWith(`Bearer ${TOKEN}`)))?.id, 'api-token');
});
