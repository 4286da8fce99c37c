/**
 * Every HTTP method named like an `Object.prototype` key, sent to every route of the matrix
 * handler (tests/helpers/matrix-handler.ts): each must answer 405 with the route's `Allow`, never
 * reach an operation, never 500 (design §32). Shared by the in-process test and the one over a real
 * `Deno.serve` socket, which passes such methods through. Portable: no Node import.
 */
import assert from 'node:assert/strict';

/** The names `Object.prototype` holds, written out by hand (the test also checks none is missing). */
export const PROTOTYPE_METHODS = [
  'toString',
  'valueOf',
  'constructor',
  'hasOwnProperty',
  '__proto__',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
];

/** Each route of the matrix handler (an `'owned'` agent with MCP), and its `Allow`. */
const ROUTES: readonly { path: string; allow: string; body?: unknown }[] = [
  { path: '/agent', allow: 'POST', body: { message: 'hi' } },
  { path: '/agent/health', allow: 'GET' },
  { path: '/agent/chat', allow: 'POST', body: { message: 'hi' } },
  { path: '/agent/chat/SESSION', allow: 'GET, DELETE' },
  { path: '/agent/approvals?sessionId=SESSION', allow: 'GET' },
  { path: '/agent/approvals/APPROVAL', allow: 'POST', body: { approved: true } },
  {
    path: '/agent/ui',
    allow: 'POST',
    body: {
      id: 'SESSION',
      trigger: 'submit-message',
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
    },
  },
  { path: '/agent/sessions', allow: 'GET' },
  {
    path: '/agent/mcp',
    allow: 'POST',
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'decide', arguments: { approved: true } } },
  },
];

/** Sends a request with `method` to `path` (under the server's origin) with `headers` and a JSON body. */
export type SendRaw = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
) => Promise<Response>;

/**
 * Alice (every scope) makes a pending approval; then every prototype-named method goes to every
 * route with a chat-only token, with every scope, and with none: 405 with `Allow` each time (401
 * first without a credential, auth running before the method is read), and the approval still waits.
 */
export async function checkPrototypeMethods(send: SendRaw, tokens: { all: string; chatOnly: string }): Promise<void> {
  const json = { 'content-type': 'application/json' };
  const all = { ...json, authorization: `Bearer ${tokens.all}` };
  const made = await send('POST', '/agent', all, JSON.stringify({ message: '/tool deploy {}', sessionId: 'proto' }));
  assert.equal(made.status, 200);
  const { approvals } = (await made.json()) as { approvals: { id: string }[] };
  const approval = approvals[0]!.id;
  for (const method of PROTOTYPE_METHODS) {
    for (const { path, allow, body } of ROUTES) {
      const target = path.replace('SESSION', 'proto').replace('APPROVAL', approval);
      const text = body === undefined ? undefined : JSON.stringify(body).replace('"APPROVAL"', `"${approval}"`);
      for (const token of [tokens.chatOnly, tokens.all]) {
        const headers = {
          ...json,
          authorization: `Bearer ${token}`,
          accept: 'application/json, text/event-stream',
        };
        const response = await send(method, target, headers, text);
        const answer = await response.text();
        assert.equal(response.status, 405, `${method} ${target}: ${answer.slice(0, 200)}`);
        assert.equal(response.headers.get('allow'), allow, `${method} ${target}: Allow`);
      }
      const anonymous = await send(method, target, json, text);
      await anonymous.body?.cancel();
      assert.equal(
        anonymous.status,
        target === '/agent/health' ? 405 : 401,
        `${method} ${target} without a credential`,
      );
    }
  }
  const pending = await send('GET', '/agent/approvals?sessionId=proto', all);
  assert.equal(pending.status, 200);
  const still = (await pending.json()) as { approvals: { id: string }[] };
  assert.deepEqual(
    still.approvals.map(({ id }) => id),
    [approval],
    'the approval still waits: no method reached decide',
  );
}
