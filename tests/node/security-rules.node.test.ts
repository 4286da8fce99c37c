// Rules of SECURITY.md's table that no other test held: serve() listens on loopback unless told
// otherwise (design §7), so a server started without `host` is not reachable from the network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import { apiToken } from '../../src/auth/api-token.ts';
import { serve } from '../../src/node.ts';

/** Whether a TCP connection to `host:port` opens. */
function opens(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

test('serve() listens on 127.0.0.1 by default: its URL names it and no other interface of the machine answers', async (t) => {
  const saved = process.env.AGENT_API_TOKEN;
  delete process.env.AGENT_API_TOKEN;
  const server = await serve({
    agent: createAgent({ name: 'loopback', model: echoModel(), store: memoryStore() }),
    auth: apiToken('loopback-test-token-0123456789'),
    port: 0,
  });
  t.after(async () => {
    await server.close();
    if (saved !== undefined) process.env.AGENT_API_TOKEN = saved;
  });
  const url = new URL(server.url);
  assert.equal(url.hostname, '127.0.0.1');
  const port = Number(url.port);
  assert.equal(await opens('127.0.0.1', port), true, 'the server answers on loopback');
  const others = Object.values(networkInterfaces())
    .flat()
    .filter((address) => address !== undefined && !address.internal && address.family === 'IPv4')
    .map((address) => address!.address);
  if (others.length === 0) t.diagnostic('this machine has no non-loopback IPv4 address: only the URL was checked');
  for (const address of others)
    assert.equal(await opens(address, port), false, `the server must not answer on ${address}`);
  assert.equal(await opens('::1', port), false, 'nor on the IPv6 loopback, which it was not asked to use');
});
