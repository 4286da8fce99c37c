// `npm run bench:session` (`node bench/session-bound.ts [--rounds <n>]`): what a session's bound
// (createAgent({ limits: { sessionBytes } }), design §19, default 4 MiB) buys.
//
// 1. In process: the CPU time of one turn (`agent.send('hello')`, echo model, memoryStore) by how
//    much history the session already holds, the record put back after each turn so every round
//    measures the same size. Up to the bound a turn costs more as its record grows (the record is
//    parsed and written whole); at the bound the next turn is refused (SESSION_FULL) at a cost
//    that no later turn exceeds. The same agent without a bound (sessionBytes 1 GiB, as before
//    issue 28) keeps growing: 8 and 16 MiB of history are measured to show it.
// 2. Over HTTP, the issue's attack: a node server (serve(), anonymous() auth) in a child process,
//    one caller sending 1 MiB messages to its own session back to back, while another polls
//    GET /agent/health every 25 ms. Printed: the health latency (median, p99, max) and the
//    filler's turn times, with the bound (default) and without it.
import { spawn } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { createAgent, echoModel, memoryStore } from '../src/agent/index.ts';
import { anonymous } from '../src/auth/index.ts';
import { serve } from '../src/node/server.ts';
import { median } from './lib.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

if (process.argv[2] === 'serve') {
  // The child: an open-to-anyone agent, bounded or not.
  const sessionBytes = Number(process.argv[3]);
  const agent = createAgent({ name: 'fill', model: echoModel(), store: memoryStore(), limits: { sessionBytes } });
  const server = await serve({ agent, auth: anonymous(), port: 0, log: 'off' });
  console.log(`listening ${server.url}`);
  process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
} else {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const roundsArg = process.argv.indexOf('--rounds');
  const rounds = roundsArg === -1 ? 15 : Number(process.argv[roundsArg + 1]);

  /** An agent whose session `s` holds `history` bytes of messages; `turn()` sends 'hello' and puts the record back. */
  async function turnAt(history: number, sessionBytes: number): Promise<() => Promise<void>> {
    const data = new Map<string, string>();
    const agent = createAgent({
      name: 'bound',
      model: echoModel(),
      store: memoryStore({ data }),
      limits: { sessionBytes },
    });
    const chunk = 'h'.repeat(64 * KiB);
    for (let held = 0; held + 2 * chunk.length + 200 < history; held += 2 * chunk.length + 100)
      await agent.send(chunk, { sessionId: 's' });
    const record = data.get('session:s') ?? '';
    return async () => {
      await agent.send('hello', { sessionId: 's' }).catch((error: unknown) => {
        if ((error as { code?: string }).code !== 'SESSION_FULL') throw error;
      });
      if (record !== '') data.set('session:s', record);
    };
  }

  const BOUND = 4 * MiB;
  const cases: [string, number, number][] = [
    ['bounded, history 0', 0, BOUND],
    ['bounded, history 256 KiB', 256 * KiB, BOUND],
    ['bounded, history 1 MiB', MiB, BOUND],
    ['bounded, history 2 MiB', 2 * MiB, BOUND],
    ['bounded, history 3.9 MiB (last turn that fits)', 3.9 * MiB, BOUND],
    ['bounded, history at 4 MiB (refused)', 4 * MiB, BOUND],
    ['unbounded, history 8 MiB', 8 * MiB, 1024 * MiB],
    ['unbounded, history 16 MiB', 16 * MiB, 1024 * MiB],
  ];
  const ops = await Promise.all(cases.map(([, history, bound]) => turnAt(history, bound)));
  const samples: number[][] = cases.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const i of [...cases.keys()].sort(() => Math.random() - 0.5)) {
      gc();
      const started = process.cpuUsage();
      await ops[i]!();
      const used = process.cpuUsage(started);
      samples[i]!.push((used.user + used.system) / 1000);
    }
  }
  console.log(`1. one turn by history held (median CPU-ms over ${rounds} rounds, interleaved)`);
  for (const [i, [name]] of cases.entries())
    console.log(`  ${name.padEnd(48)} ${median(samples[i]!).toFixed(2).padStart(8)} ms`);
  const atBound = median(samples[5]!);
  const worstBounded = Math.max(...samples.slice(0, 6).map(median));
  console.log(
    `  the costliest bounded turn: ${worstBounded.toFixed(2)} ms; a refused turn at the bound: ${atBound.toFixed(2)} ms, whatever came before`,
  );

  async function attack(sessionBytes: number, requests: number, messageBytes: number): Promise<void> {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'serve', String(sessionBytes)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /listening (\S+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.once('exit', () => reject(new Error(`the server exited:\n${out}`)));
    });
    // A server that has served before (its code compiled), as one under attack would be.
    for (let i = 0; i < 20; i++)
      await (
        await fetch(`${url}/agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ message: 'w'.repeat(64 * KiB) }),
        })
      ).arrayBuffer();
    const health: number[] = [];
    let filling = true;
    const poller = (async () => {
      while (filling) {
        const started = performance.now();
        await (await fetch(`${url}/agent/health`)).arrayBuffer();
        health.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    const message = 'm'.repeat(messageBytes - 64);
    const turns: { ms: number; status: number }[] = [];
    let sessionId: string | undefined;
    for (let i = 0; i < requests; i++) {
      const started = performance.now();
      const response = await fetch(`${url}/agent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message, sessionId }),
      });
      const body = (await response.json()) as { sessionId?: string };
      sessionId ??= body.sessionId;
      turns.push({ ms: performance.now() - started, status: response.status });
    }
    filling = false;
    await poller;
    child.kill('SIGTERM');
    const sorted = [...health].sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
    const accepted = turns.filter((turn) => turn.status === 200).length;
    const refused = turns.filter((turn) => turn.status === 409).length;
    const last = turns.slice(-10).map((turn) => turn.ms);
    console.log(
      `  ${sessionBytes >= 1024 * MiB ? 'unbounded (1 GiB)' : `bounded (${sessionBytes / MiB} MiB)`}, ${requests} sends of ${messageBytes / KiB} KiB: ${accepted} stored, ${refused} refused (409)`,
    );
    console.log(
      `    GET /agent/health over ${health.length} polls: median ${median(health).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms (target under 50 ms)`,
    );
    console.log(`    the filler's last 10 sends: median ${median(last).toFixed(1)} ms each`);
  }

  console.log(
    '\n2. GET /agent/health while one anonymous caller fills its session as fast as it can (a warmed server in a child process)',
  );
  await attack(BOUND, 80, MiB);
  await attack(BOUND, 80, 128 * KiB);
  await attack(1024 * MiB, 30, MiB);
}
