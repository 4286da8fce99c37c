// The cloudflare-worker target as a deployment (issue 21): the model agent.json declares runs in
// workerd against a local chat-completions server, every route of a declarative agent answers,
// and sessions live in Durable Objects (persisted by Miniflare across worker restarts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  AbstractChat,
  DefaultChatTransport,
  uiMessageChunkSchema,
  type ChatInit,
  type ChatState,
  type UIMessage,
} from 'ai';
import { build } from '../../src/targets/build.ts';
import { ENV_TOKEN, bearer, fixture, nodeBin, root, tempFolder, writeDir } from '../helpers/build.ts';
import type { RunningWorker } from '../helpers/workerd.ts';
import { modelReply, startBuiltWorker, startModelServer, type ModelServer } from '../helpers/worker.ts';
import { startWranglerDev } from '../helpers/wrangler.ts';

const MODEL_KEY = 'sk-local-model-key-0123456789';
const MODEL = 'tiny-chat';
const INSTRUCTIONS = 'You answer briefly.';
const json = { authorization: bearer(ENV_TOKEN), 'content-type': 'application/json' };

interface Result {
  sessionId: string;
  status: string;
  text: string;
  messages: { role: string; content: string }[];
  approvals: unknown[];
}

async function post(
  worker: RunningWorker,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return worker.fetch(`http://worker/agent${path}`, {
    method: 'POST',
    headers: { ...json, ...headers },
    body: JSON.stringify(body),
  });
}

/** The `data:` payloads of a server-sent event stream. */
function sseData(text: string): unknown[] {
  return text
    .split('\n\n')
    .flatMap((event) =>
      event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6)),
    )
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}

/** The in-memory chat state a framework binding would hold. */
class PlainState implements ChatState<UIMessage> {
  status: ChatState<UIMessage>['status'] = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(value: T): T => structuredClone(value);
}

class TestChat extends AbstractChat<UIMessage> {
  constructor(init: Omit<ChatInit<UIMessage>, 'messages'>) {
    super({ ...init, state: new PlainState() });
  }
}

/** A `useChat` client (the real `ai` package's chat and transport) talking to the worker. */
function chatWith(worker: RunningWorker, id: string, streams: Promise<string>[]): TestChat {
  const transport = new DefaultChatTransport({
    api: 'http://worker/agent/ui',
    headers: { authorization: bearer(ENV_TOKEN) },
    fetch: async (url, init) => {
      const response = await worker.fetch(String(url), init as RequestInit);
      const [mine, theirs] = (response.body as ReadableStream<Uint8Array>).tee();
      streams.push(new Response(mine).text());
      return new Response(theirs, { status: response.status, headers: response.headers });
    },
  });
  return new TestChat({ id, transport });
}

describe('cloudflare-worker target: the declared openai-compatible model, every route, sessions in Durable Objects', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentward-worker-'));
  const out = join(folder, 'out');
  const persist = join(folder, 'durable-objects');
  let model: ModelServer;
  let worker: RunningWorker;
  const logs: string[] = [];
  const restart = async () => {
    await worker.dispose();
    worker = await startBuiltWorker(out, { AGENT_API_TOKEN: ENV_TOKEN, MODEL_API_KEY: MODEL_KEY }, persist);
  };

  before(async () => {
    model = await startModelServer(MODEL_KEY);
    const dir = writeDir(
      join(folder, 'dir'),
      {
        'agent.json': JSON.stringify({
          name: 'remote',
          instructions: INSTRUCTIONS,
          model: { provider: 'openai-compatible', baseURL: model.baseURL, model: MODEL },
        }),
      },
      fixture('plain'),
    );
    await build(dir, { target: 'cloudflare-worker', out, log: (line) => logs.push(line) });
    worker = await startBuiltWorker(out, { AGENT_API_TOKEN: ENV_TOKEN, MODEL_API_KEY: MODEL_KEY }, persist);
  });
  after(async () => {
    await worker?.dispose();
    await model?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  test('the build says what the worker serves, and the manifest and wrangler.toml name the model key secret', () => {
    const said = logs.join('\n');
    assert.ok(said.includes(`openai-compatible "${MODEL}" at "${model.baseURL}"`), said);
    assert.match(said, /MODEL_API_KEY/);
    for (const route of [
      'GET /agent/health',
      'POST /agent,',
      'POST /agent/chat',
      'GET /agent/chat/:id',
      'POST /agent/ui',
    ])
      assert.ok(said.includes(route), route);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    assert.deepEqual(manifest.model, { provider: 'openai-compatible', baseURL: model.baseURL, model: MODEL });
    assert.deepEqual(manifest.secrets, ['AGENT_API_TOKEN', 'MODEL_API_KEY']);
    assert.deepEqual(manifest.durableObjects, { AGENT_SESSIONS: 'AgentSession' });
    const toml = readFileSync(join(out, 'wrangler.toml'), 'utf8');
    assert.match(toml, /wrangler secret put MODEL_API_KEY/);
    assert.equal(toml.includes(MODEL_KEY), false);
    assert.equal(readFileSync(join(out, 'worker.js'), 'utf8').includes(MODEL_KEY), false);
  });

  test('POST <base> runs the declared model with its instructions and the MODEL_API_KEY binding', async () => {
    const calls = model.calls.length;
    const response = await post(worker, '', { message: 'hello there' });
    assert.equal(response.status, 200);
    const result = (await response.json()) as Result;
    assert.equal(result.text, modelReply(MODEL, 'hello there'));
    assert.equal(result.status, 'completed');
    assert.match(result.sessionId, /^[A-Za-z0-9_-]{22}$/, 'a new session gets a random 128-bit id');
    const call = model.calls[calls]!;
    assert.equal(call.headers.authorization, `Bearer ${MODEL_KEY}`);
    assert.equal(call.body.model, MODEL);
    assert.deepEqual(call.body.messages, [
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: 'hello there' },
    ]);
  });

  test('POST <base>/chat answers JSON, and streams server-sent events with Accept: text/event-stream; the session continues', async () => {
    const first = (await (await post(worker, '/chat', { message: 'one', sessionId: 'chat-1' })).json()) as Result;
    assert.equal(first.text, modelReply(MODEL, 'one'));
    const response = await post(
      worker,
      '/chat',
      { message: 'two', sessionId: 'chat-1' },
      { accept: 'text/event-stream' },
    );
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = sseData(await response.text()) as { type: string; text?: string; result?: Result }[];
    assert.deepEqual(events[0], { type: 'start', sessionId: 'chat-1' });
    const deltas = events.filter((event) => event.type === 'text-delta').map((event) => event.text);
    assert.ok(deltas.length > 1, 'the model stream arrives in several deltas');
    assert.equal(deltas.join(''), modelReply(MODEL, 'two'));
    const finish = events.at(-1)!;
    assert.equal(finish.type, 'finish');
    assert.deepEqual(
      finish.result!.messages.map((m) => m.content),
      ['one', modelReply(MODEL, 'one'), 'two', modelReply(MODEL, 'two')],
    );
    assert.equal(model.calls.at(-1)!.body.stream, true);
    assert.deepEqual(
      model.calls.at(-1)!.body.messages.map((m) => m.content),
      [INSTRUCTIONS, 'one', modelReply(MODEL, 'one'), 'two'],
      'the model sees the session',
    );
  });

  test('GET <base>/chat/:id reads the transcript; an unknown id is 404', async () => {
    await post(worker, '/chat', { message: 'kept', sessionId: 'read-me' });
    const response = await worker.fetch('http://worker/agent/chat/read-me', {
      headers: { authorization: bearer(ENV_TOKEN) },
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      sessionId: 'read-me',
      messages: [
        { role: 'user', content: 'kept' },
        { role: 'assistant', content: modelReply(MODEL, 'kept') },
      ],
    });
    const unknown = await worker.fetch('http://worker/agent/chat/never-made', {
      headers: { authorization: bearer(ENV_TOKEN) },
    });
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { error: 'Session not found' });
  });

  test('POST <base>/ui: the real ai client (useChat transport) streams the reply, and the chat id is the session', async () => {
    const streams: Promise<string>[] = [];
    const chat = chatWith(worker, 'ui-chat', streams);
    await chat.sendMessage({ text: 'from the browser' });
    assert.equal(chat.error, undefined);
    const text = () =>
      chat.messages
        .at(-1)!
        .parts.map((part) => (part.type === 'text' ? part.text : ''))
        .join('');
    assert.equal(text(), modelReply(MODEL, 'from the browser'));
    await chat.sendMessage({ text: 'and again' });
    assert.equal(chat.error, undefined);
    assert.equal(text(), modelReply(MODEL, 'and again'));
    const schema = uiMessageChunkSchema();
    const bodies = await Promise.all(streams);
    assert.equal(bodies.length, 2);
    for (const body of bodies) {
      const chunks = sseData(body);
      assert.equal(chunks.at(-1), '[DONE]');
      for (const chunk of chunks.slice(0, -1))
        assert.ok((await schema.validate!(chunk)).success, JSON.stringify(chunk));
    }
    const transcript = (await (
      await worker.fetch('http://worker/agent/chat/ui-chat', { headers: { authorization: bearer(ENV_TOKEN) } })
    ).json()) as Result;
    assert.deepEqual(
      transcript.messages.map((m) => m.content),
      ['from the browser', modelReply(MODEL, 'from the browser'), 'and again', modelReply(MODEL, 'and again')],
    );
  });

  test('approvals: a declarative agent has none pending, and deciding an unknown id is 404', async () => {
    const listed = await worker.fetch('http://worker/agent/approvals?sessionId=chat-1', {
      headers: { authorization: bearer(ENV_TOKEN) },
    });
    assert.equal(listed.status, 200);
    assert.deepEqual(await listed.json(), { approvals: [] });
    const decided = await post(worker, '/approvals/nope', { approved: true });
    assert.equal(decided.status, 404);
    assert.deepEqual(await decided.json(), { error: 'Approval not found' });
  });

  test('every route but health is behind AGENT_API_TOKEN; bad input answers as the route handler does', async () => {
    assert.equal((await worker.fetch('http://worker/agent/health')).status, 200);
    for (const [method, path] of [
      ['POST', ''],
      ['POST', '/chat'],
      ['GET', '/chat/chat-1'],
      ['POST', '/ui'],
      ['GET', '/approvals?sessionId=chat-1'],
    ]) {
      const response = await worker.fetch(`http://worker/agent${path}`, {
        method,
        ...(method === 'POST' && { body: '{}' }),
      });
      assert.equal(response.status, 401, `${method} ${path}`);
      assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      await response.body?.cancel();
    }
    const cases: [string, string, string | undefined, number, unknown][] = [
      ['POST', '/chat', '{', 400, { error: 'Request body must be valid JSON' }],
      ['POST', '/chat', '{"sessionId":"x"}', 400, { error: 'message must be a string' }],
      [
        'POST',
        '/chat',
        '{"message":"hi","sessionId":"has space"}',
        400,
        {
          error: 'send(): sessionId must be 1 to 256 characters without whitespace or control characters; got a string',
        },
      ],
      ['POST', '/ui', '{"id":"x","messages":[]}', 400, { error: 'messages must be a non-empty list' }],
      ['GET', '/chat', undefined, 405, { error: 'Method Not Allowed' }],
      ['GET', '', undefined, 405, { error: 'Method Not Allowed' }],
      ['GET', '/nope', undefined, 404, { error: 'Not Found' }],
    ];
    for (const [method, path, body, status, answer] of cases) {
      const response = await worker.fetch(`http://worker/agent${path}`, {
        method,
        headers: json,
        ...(body !== undefined && { body }),
      });
      assert.equal(response.status, status, `${method} ${path} ${body}`);
      assert.deepEqual(await response.json(), answer, `${method} ${path} ${body}`);
      if (status === 405) assert.equal(response.headers.get('allow'), 'POST');
    }
    // Without sessionId, GET /approvals is the queue of the caller's own runs' pending approvals (design §33).
    const queue = await worker.fetch('http://worker/agent/approvals', { headers: json });
    assert.equal(queue.status, 200);
    const listed = (await queue.json()) as { approvals: unknown; nextCursor: unknown };
    assert.ok(Array.isArray(listed.approvals) && 'nextCursor' in listed, JSON.stringify(listed));
    const large = await post(worker, '/chat', { message: 'x'.repeat(1024 * 1024) });
    assert.equal(large.status, 413);
    await large.body?.cancel();
  });

  test('two concurrent sends to one session both land, in the order they came', async () => {
    const held = model.hold('first');
    const first = post(worker, '/chat', { message: 'first', sessionId: 'busy' });
    await held.received;
    const second = post(worker, '/chat', { message: 'second', sessionId: 'busy' });
    // The second waits for the first turn: the model is not asked while the first is held.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(model.calls.at(-1)!.body.messages.at(-1)!.content, 'first');
    held.release();
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    await a.body?.cancel();
    await b.body?.cancel();
    const transcript = (await (
      await worker.fetch('http://worker/agent/chat/busy', { headers: { authorization: bearer(ENV_TOKEN) } })
    ).json()) as Result;
    assert.deepEqual(
      transcript.messages.map((m) => m.content),
      ['first', modelReply(MODEL, 'first'), 'second', modelReply(MODEL, 'second')],
    );
  });

  test('a model failure is a 502 that names neither the key nor the provider answer', async () => {
    const dir = writeDir(
      join(folder, 'bad-key'),
      {
        'agent.json': JSON.stringify({
          name: 'remote',
          model: { provider: 'openai-compatible', baseURL: model.baseURL, model: MODEL },
        }),
      },
      fixture('plain'),
    );
    const badOut = join(folder, 'bad-key-out');
    await build(dir, { target: 'cloudflare-worker', out: badOut, log: () => {} });
    const wrongKey = 'sk-wrong-key-not-to-be-echoed';
    const bad = await startBuiltWorker(badOut, { AGENT_API_TOKEN: ENV_TOKEN, MODEL_API_KEY: wrongKey });
    try {
      const response = await post(bad, '/chat', { message: 'hi' });
      assert.equal(response.status, 502);
      assert.deepEqual(await response.json(), { error: 'The model failed' });
      await bad.waitForLog((line) => line.message.includes('HTTP 401'));
      assert.equal(
        bad.logs.some((line) => line.message.includes(wrongKey)),
        false,
      );
    } finally {
      await bad.dispose();
    }
  });

  // Last: it restarts the worker.
  test('sessions survive a worker restart (Durable Object storage persisted by Miniflare) and continue', async () => {
    await post(worker, '/chat', { message: 'before restart', sessionId: 'durable' });
    await restart();
    const transcript = (await (
      await worker.fetch('http://worker/agent/chat/durable', { headers: { authorization: bearer(ENV_TOKEN) } })
    ).json()) as Result;
    assert.deepEqual(
      transcript.messages.map((m) => m.content),
      ['before restart', modelReply(MODEL, 'before restart')],
    );
    const result = (await (
      await post(worker, '/chat', { message: 'after restart', sessionId: 'durable' })
    ).json()) as Result;
    assert.deepEqual(
      result.messages.map((m) => m.content),
      ['before restart', modelReply(MODEL, 'before restart'), 'after restart', modelReply(MODEL, 'after restart')],
    );
    assert.deepEqual(
      model.calls.at(-1)!.body.messages.map((m) => m.content),
      [INSTRUCTIONS, 'before restart', modelReply(MODEL, 'before restart'), 'after restart'],
    );
  });
});

describe('cloudflare-worker target: long transcripts', () => {
  test('a transcript past the Durable Object value limit is stored in chunks and read back whole', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('plain'), { target: 'cloudflare-worker', out, log: () => {} });
    const worker = await startBuiltWorker(out, { AGENT_API_TOKEN: ENV_TOKEN });
    t.after(() => worker.dispose());
    // 450,000 two-byte characters (900 kB of UTF-8, under the 1 MiB body limit); echoed and sent twice: 3.6 MB of transcript, past the 2 MB of a value.
    const big = `${'ж'.repeat(450_000 - 2)}😀`;
    for (const message of [big, big, 'small']) {
      const response = await post(worker, '/chat', { message, sessionId: 'long' });
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    const transcript = (await (
      await worker.fetch('http://worker/agent/chat/long', { headers: { authorization: bearer(ENV_TOKEN) } })
    ).json()) as Result;
    assert.deepEqual(
      transcript.messages.map((m) => m.content),
      [big, big, big, big, 'small', 'small'],
    );
  });
});

describe('cloudflare-worker target: wrangler', () => {
  test('wrangler deploy --dry-run accepts the output, with the Durable Object binding (offline)', (t) => {
    const out = join(tempFolder(t), 'out');
    const home = tempFolder(t, 'agentward-wrangler-home-');
    return build(fixture('plain'), { target: 'cloudflare-worker', out, log: () => {} }).then(() => {
      const result = spawnSync(
        nodeBin,
        [
          join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js'),
          'deploy',
          '--dry-run',
          '--outdir',
          join(home, 'dist'),
        ],
        {
          cwd: out,
          encoding: 'utf8',
          timeout: 120_000,
          env: {
            PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH}`,
            HOME: home,
            XDG_CONFIG_HOME: join(home, '.config'),
            WRANGLER_SEND_METRICS: 'false',
            CI: '1',
            NO_COLOR: '1',
          },
        },
      );
      const output = `${result.stdout}\n${result.stderr}`;
      assert.equal(result.status, 0, output);
      assert.match(output, /--dry-run: exiting now/);
      assert.match(output, /env\.AGENT_SESSIONS \(AgentSession\)\s+Durable Object/);
    });
  });
});

describe('cloudflare-worker target: wrangler dev', () => {
  test('npx wrangler dev serves the output with AGENT_API_TOKEN from a .dev.vars file beside wrangler.toml (as the README shows)', async (t) => {
    const out = join(tempFolder(t), 'out');
    await build(fixture('plain'), { target: 'cloudflare-worker', out, log: () => {} });
    writeFileSync(join(out, '.dev.vars'), `AGENT_API_TOKEN=${ENV_TOKEN}\n`);
    const url = `${await startWranglerDev(t, out)}/agent`;
    const body = JSON.stringify({ message: 'hello from wrangler dev' });
    assert.equal(
      (await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).status,
      401,
    );
    const ran = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', authorization: bearer(ENV_TOKEN) },
    });
    assert.equal(ran.status, 200);
    assert.equal(((await ran.json()) as { text: string }).text, 'hello from wrangler dev');
  });
});
