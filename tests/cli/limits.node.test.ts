// "limits" in agentward.json (design §22): checked as serve()'s limits when the directory is read
// (a typo names the file and the closest field; a store or clientAddress, which only code can
// give, is refused saying so); `agentward start` and the node-server build serve them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readAgentDir } from '../../src/agent-dir/agent-dir.ts';
import { build } from '../../src/targets/build.ts';
import {
  BAKED_TOKEN,
  bearer,
  fixture,
  root,
  startBuiltServer,
  startNodeServer,
  tempFolder,
  writeDir,
} from '../helpers/build.ts';

const withLimits = (t: { after(fn: () => void): void }, limits: unknown) =>
  writeDir(
    join(tempFolder(t), 'dir'),
    {
      'agentward.json': JSON.stringify({ name: 'plain', basePath: '/agent', apiToken: BAKED_TOKEN, limits }),
    },
    fixture('plain'),
  );

test('agentward.json "limits" is closed and checked like serve()\'s, naming the file', async (t) => {
  const cases: [unknown, RegExp][] = [
    [
      { request: { limit: 3, windowSec: 60 } },
      /agentward\.json: limits: unknown option "request" \(did you mean "requests"\?\)/,
    ],
    [{ requests: { limit: 3, windowsec: 60 } }, /unknown option "windowsec" \(did you mean "windowSec"\?\)/],
    [{ concurrent: 0 }, /limits\.concurrent must be a positive integer/],
    [
      { tokens: { limit: 10, windowSec: 99_999_999 } },
      /limits\.tokens\.windowSec must be a whole number of seconds from 1 to 31536000/,
    ],
    [{}, /limits needs one of requests, concurrent, tokens, failures/],
    ['60/min', /limits must be \{/],
    [
      { concurrent: 2, store: 'postgres' },
      /"limits" takes requests, concurrent, tokens and failures; a store and clientAddress are code: give them to serve\(\)/,
    ],
    [{ concurrent: 2, clientAddress: 'x-forwarded-for' }, /a store and clientAddress are code/],
  ];
  for (const [limits, message] of cases)
    await assert.rejects(readAgentDir(withLimits(t, limits)), message, JSON.stringify(limits));
  await assert.rejects(
    readAgentDir(
      writeDir(
        join(tempFolder(t), 'dir'),
        { 'agentward.json': JSON.stringify({ limit: { concurrent: 1 } }) },
        fixture('plain'),
      ),
    ),
    /unknown option "limit" \(did you mean "limits"\?\)/,
  );
  const read = await readAgentDir(
    withLimits(t, { requests: { limit: 3, windowSec: 60 }, failures: { limit: 5, windowSec: 600 } }),
  );
  assert.deepEqual(read.settings.limits, {
    requests: { limit: 3, windowSec: 60 },
    failures: { limit: 5, windowSec: 600 },
  });
});

async function threeThenRefused(agentUrl: string): Promise<void> {
  const post = () =>
    fetch(agentUrl, {
      method: 'POST',
      headers: { authorization: bearer(BAKED_TOKEN), 'content-type': 'application/json' },
      body: '{"message":"hi"}',
    });
  for (const left of [2, 1, 0]) {
    const accepted = await post();
    assert.equal(accepted.status, 200);
    assert.match(accepted.headers.get('ratelimit')!, new RegExp(`^"requests";r=${left};t=\\d+$`));
  }
  const refused = await post();
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('ratelimit-policy'), '"requests";q=3;w=600');
}

test('agentward start serves the limits of agentward.json', async (t) => {
  const dir = withLimits(t, { requests: { limit: 3, windowSec: 600 } });
  const server = await startNodeServer([join(root, 'src/cli/main.ts'), 'start', dir], {
    AGENT_LOG: 'off',
    AGENT_DATA_DIR: join(dir, '.data'),
  });
  try {
    await threeThenRefused(server.agentUrl);
  } finally {
    await server.stop();
  }
});

test('the node-server build keeps the limits of agentward.json, and its server.js serves them', async (t) => {
  const dir = withLimits(t, { requests: { limit: 3, windowSec: 600 } });
  const out = join(tempFolder(t), 'out');
  await build(dir, { target: 'node-server', out, log: () => {} });
  assert.deepEqual(JSON.parse(readFileSync(join(out, 'app', 'agentward.json'), 'utf8')).limits, {
    requests: { limit: 3, windowSec: 600 },
  });
  const server = await startBuiltServer(out, { AGENT_LOG: 'off', AGENT_DATA_DIR: join(out, '.data') });
  try {
    await threeThenRefused(server.agentUrl);
  } finally {
    await server.stop();
  }
});
