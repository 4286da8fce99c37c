// Suite `auth`: routeAuth() on a prebuilt Request with valid credentials, per built-in helper.
import { anonymous, apiToken, basic, routeAuth } from '../../src/auth/index.ts';
import type { AuthResult } from '../../src/auth/index.ts';
import type { SuiteSpec } from '../lib.ts';

const URL_ = 'https://agent.example/agent';

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function basicHeader(user: string, password: string): string {
  return `Basic ${btoa(`${user}:${password}`)}`;
}

/** `basic()` with `count` users, and a request carrying the credentials of the user in the middle. */
function basicCase(count: number): {
  authenticate: (r: Request) => Promise<AuthResult>;
  request: Request;
  user: string;
} {
  const users: Record<string, string> = {};
  for (let i = 0; i < count; i++) users[`user${String(i).padStart(4, '0')}`] = randomToken();
  const user = `user${String(count >> 1).padStart(4, '0')}`;
  const request = new Request(URL_, { headers: { authorization: basicHeader(user, users[user]!) } });
  return { authenticate: routeAuth([basic({ users })]), request, user };
}

async function expectAccepted(
  name: string,
  authenticate: (r: Request) => Promise<AuthResult>,
  request: Request,
  id: string,
): Promise<void> {
  const result = await authenticate(request);
  if (!result.ok || result.principal.id !== id) throw new Error(`auth suite: case ${name} does not accept its request`);
}

export default async function suites(): Promise<SuiteSpec[]> {
  const token = randomToken();
  const tokenHeaders = { authorization: `Bearer ${token}` };
  const tokenAuth = routeAuth([apiToken(token)]);
  const tokenRequest = new Request(URL_, { headers: tokenHeaders });
  const anonymousAuth = routeAuth([anonymous()]);
  const plainRequest = new Request(URL_);
  const basics = { 'basic-1': basicCase(1), 'basic-100': basicCase(100), 'basic-1000': basicCase(1000) };

  await expectAccepted('api-token', tokenAuth, tokenRequest, 'api-token');
  await expectAccepted('anonymous', anonymousAuth, plainRequest, 'anonymous');
  for (const [name, c] of Object.entries(basics)) await expectAccepted(name, c.authenticate, c.request, c.user);

  return [
    {
      suite: 'auth',
      baseline: 'new-request',
      cases: {
        'new-request': () => new Request(URL_, { headers: tokenHeaders }),
        'api-token': () => tokenAuth(tokenRequest),
        'basic-1': () => basics['basic-1'].authenticate(basics['basic-1'].request),
        'basic-100': () => basics['basic-100'].authenticate(basics['basic-100'].request),
        'basic-1000': () => basics['basic-1000'].authenticate(basics['basic-1000'].request),
        anonymous: () => anonymousAuth(plainRequest),
      },
      note: 'each case: routeAuth([helper]) on a prebuilt Request with valid credentials (basic: the middle user of N)',
      verdict: (ops) => {
        const cost = ops['basic-1']! / ops['basic-1000']!;
        const verdict = cost < 3 ? 'meets' : 'MISSES';
        return `basic() with 1,000 users costs ${cost.toFixed(2)}x basic() with one user: ${verdict} the target (< 3x)`;
      },
    },
  ];
}
