// Design §28 with §31: an agent directory's auth.ts exports telemetry beside its auth list, and the
// server it resolves to traces each request with it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveAgentDir } from '../../src/agent-dir/resolve.ts';
import { serve } from '../../src/node/index.ts';
import { tempFolder, writeDir } from '../helpers/build.ts';

test("auth.ts's telemetry export traces the directory's requests: the handler's span with the auth outcome", async (t) => {
  const dir = writeDir(tempFolder(t), {
    'agent.ts':
      "import { createAgent, echoModel } from 'agentward';\nexport default createAgent({ name: 'traced', model: echoModel() });\n",
    'auth.ts': `import { apiToken } from 'agentward/auth';
export default [apiToken('directory-telemetry-token-0123456789')];
const spans = (globalThis.__agentDirSpans ??= []);
const span = (name, options) => ({
  setAttribute(key, value) { options.attributes[key] = value; },
  setStatus() {},
  end() { spans.push({ name, attributes: options.attributes }); },
});
export const telemetry = { tracer: { startActiveSpan: (name, options, fn) => fn(span(name, { attributes: { ...options.attributes } })) } };
`,
  });
  const { agent, auth, options, manifest } = await resolveAgentDir(dir);
  assert.equal(typeof (options.telemetry as { tracer?: unknown } | undefined)?.tracer, 'object');
  const server = await serve({ agent, auth, ...options, basePath: manifest.basePath, port: 0, log: 'off' });
  try {
    const response = await fetch(`${server.url}${manifest.basePath}`, {
      method: 'POST',
      headers: { authorization: 'Bearer directory-telemetry-token-0123456789', 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    });
    assert.equal(response.status, 200);
    await response.text();
    const spans = (globalThis as { __agentDirSpans?: { name: string; attributes: Record<string, unknown> }[] })
      .__agentDirSpans!;
    const request = spans.find((span) => span.name === 'agentward send');
    assert.ok(request, spans.map((span) => span.name).join(', '));
    assert.equal(request.attributes['agentward.auth.outcome'], 'accepted');
    assert.equal(request.attributes['agentward.auth.authenticator'], 'api-token');
    assert.ok(!JSON.stringify(spans).includes('directory-telemetry-token'), 'no span holds the token');
  } finally {
    await server.close();
  }
});
