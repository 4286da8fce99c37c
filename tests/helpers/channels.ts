// Shared by the channel tests: a local stand-in for a platform's Web API, and an agent that records what reaches it.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent, SendOptions } from '../../src/agent/types.ts';
import type { ChannelContext } from '../../src/node/channel.ts';

export interface RecordedCall {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * A channel's session id computed independently: `<channel>:` + base64url HMAC-SHA256 of the JSON
 * list of platform ids, keyed with HMAC-SHA256(secret, "agentward channel session ids v1 <channel>").
 */
export function expectedSessionId(channel: string, secret: string, platformIds: string[]): string {
  const key = createHmac('sha256', secret).update(`agentward channel session ids v1 ${channel}`).digest();
  return `${channel}:${createHmac('sha256', key).update(JSON.stringify(platformIds)).digest('base64url')}`;
}

/** A local HTTP server that records each request and answers `answer` as JSON. */
export async function platformApi(
  answer: unknown = { ok: true },
): Promise<{ baseUrl: string; calls: RecordedCall[]; close(): Promise<void> }> {
  const calls: RecordedCall[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      calls.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/api`,
    calls,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** An agent that records every `send` and replies `echo: <message>`. */
export function recordingAgent(): { agent: Agent; sends: { message: string; options: SendOptions | undefined }[] } {
  const sends: { message: string; options: SendOptions | undefined }[] = [];
  const unused = () => Promise.reject(new Error('not used by channels'));
  const agent: Agent = {
    name: 'recorder',
    sessions: 'shared',
    async send(message, options) {
      sends.push({ message, options });
      return {
        sessionId: options?.sessionId ?? 'session',
        status: 'completed',
        text: `echo: ${message}`,
        messages: [],
        approvals: [],
      };
    },
    session: () => {
      throw new Error('not used by channels');
    },
    decide: unused,
    transcript: unused,
    pendingApprovals: unused,
    listSessions: unused,
    listTools: unused,
    callTool: unused,
    deleteSession: unused,
  };
  return { agent, sends };
}

/** A channel context whose background work the test can wait for. */
export function channelContext(agent: Agent): ChannelContext & { settled(): Promise<void> } {
  const tasks: Promise<unknown>[] = [];
  return {
    agent,
    waitUntil: (task) => void tasks.push(task),
    settled: async () => void (await Promise.all(tasks)),
  };
}
