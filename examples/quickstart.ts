// The auth layer alone, with no agent (`node examples/quickstart.ts`): a node:http server whose
// Web handler sits behind routeAuth([basic(), apiToken()]) and answers who the caller is.
// PORT (default 3000), DEMO_PASSWORD, AGENT_API_TOKEN; a missing secret is generated and printed once.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { apiToken, basic, routeAuth, wwwAuthenticateLines } from '../src/auth/index.ts';

const host = '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);

function secretFromEnv(name: string): { value: string; generated: boolean } {
  const value = process.env[name];
  if (value !== undefined && value !== '') return { value, generated: false };
  return { value: randomBytes(24).toString('base64url'), generated: true };
}

const password = secretFromEnv('DEMO_PASSWORD');
const token = secretFromEnv('AGENT_API_TOKEN');

const authenticate = routeAuth([basic({ users: { demo: password.value } }), apiToken(token.value)]);

/** The protected Web handler: it answers who the caller is. */
async function handle(request: Request): Promise<Response> {
  const result = await authenticate(request);
  if (!result.ok) return result.response;
  return Response.json({ hello: result.principal.id, principal: result.principal });
}

async function toRequest(req: IncomingMessage): Promise<Request> {
  const headers = new Headers();
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    for (const value of values ?? []) headers.append(name, value);
  }
  const method = req.method ?? 'GET';
  let body: BodyInit | undefined;
  if (method !== 'GET' && method !== 'HEAD') {
    const chunks: Uint8Array[] = [];
    for await (const chunk of req) chunks.push(chunk as Uint8Array);
    body = Buffer.concat(chunks);
  }
  return new Request(new URL(req.url ?? '/', `http://${host}:${port}`), { method, headers, body });
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => {
    if (name !== 'www-authenticate') res.setHeader(name, value);
  });
  // Fetch Headers joins repeated challenges with commas; write each as its own header line.
  const challenges = wwwAuthenticateLines(response);
  if (challenges !== undefined) res.setHeader('www-authenticate', [...challenges]);
  res.end(Buffer.from(await response.arrayBuffer()));
}

const server = createServer((req, res) => {
  toRequest(req)
    .then(handle)
    .then((response) => writeResponse(response, res))
    .catch((error: unknown) => {
      console.error('quickstart: request failed', error);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    });
});

server.listen(port, host, () => {
  const url = `http://${host}:${port}/`;
  console.log(`agentward quick start listening on ${url}`);
  // Only secrets generated here are shown, once, in the commands below; values from the environment never are.
  if (password.generated) console.log('generated a password for user "demo" (set DEMO_PASSWORD to choose one)');
  if (token.generated) console.log('generated an API token (set AGENT_API_TOKEN to choose one)');
  console.log('try:');
  console.log(`  curl -i ${url}`);
  console.log(`  curl -u demo:${password.generated ? password.value : '"$DEMO_PASSWORD"'} ${url}`);
  console.log(`  curl -H "Authorization: Bearer ${token.generated ? token.value : '$AGENT_API_TOKEN'}" ${url}`);
});
