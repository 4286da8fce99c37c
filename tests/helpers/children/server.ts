// A node server in a child process, for the restart and shutdown tests: basic auth (ada, bob),
// a file store in argv[2], a dynamic model that prefixes replies with the run's principal id,
// a `refund` tool that needs approval, and a `slow` message that takes 500 ms.
import { createAgent, echoModel } from '../../../src/agent/index.ts';
import { basic } from '../../../src/auth/basic.ts';
import { closeOnSignals, fileStore, serve } from '../../../src/node.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: server-child.ts <data dir>');
const echo = echoModel();

const agent = createAgent({
  name: 'fixture',
  store: fileStore(dir),
  model: ({ principal }) => ({
    async generate(request) {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'user' && last.content === 'slow') {
        console.log('slow-started');
        await new Promise((done) => setTimeout(done, 500));
        return { text: 'slow done' };
      }
      const turn = await echo.generate(request);
      return turn.text ? { ...turn, text: `[${principal?.id ?? 'nobody'}] ${turn.text}` } : turn;
    },
  }),
  tools: [
    {
      name: 'refund',
      description: 'Refunds an amount',
      parameters: { type: 'object', properties: { amount: { type: 'number' } } },
      needsApproval: true,
      execute: (args: { amount: number }) => ({ refunded: args.amount }),
    },
  ],
});

const server = await serve({ agent, auth: basic({ users: { ada: 'ada-password', bob: 'bob-password' } }), port: 0 });
closeOnSignals(server);
console.log(`listening ${server.url}`);
