/** A real agent for the route handler tests: its dynamic `model` and `instructions` functions record the principal of every run. */
import { createAgent, echoModel, memoryStore } from '../../src/agent/index.ts';
import type { Agent, Principal, RunResult, Tool } from '../../src/agent/types.ts';

export interface PrincipalAgent {
  agent: Agent;
  /** The `principal` each call of the `model` function received, in order (`undefined`: none). */
  modelSaw: (Principal | undefined)[];
  /** The `principal` each call of the `instructions` function received, in order. */
  instructionsSaw: (Principal | undefined)[];
  /** The `metadata` each call of the `model` function received, in order. */
  metadataSaw: Readonly<Record<string, unknown>>[];
  /** Arguments each `deploy` execution received. */
  deployed: unknown[];
}

/** `deploy` needs approval; echoModel calls it for the message `/tool deploy {"env":"prod"}`. `lookup` runs without approval. */
export const DEPLOY_MESSAGE = '/tool deploy {"env":"prod"}';

export function principalAgent(): PrincipalAgent {
  const modelSaw: (Principal | undefined)[] = [];
  const instructionsSaw: (Principal | undefined)[] = [];
  const metadataSaw: Readonly<Record<string, unknown>>[] = [];
  const deployed: unknown[] = [];
  const deploy: Tool<{ env: string }> = {
    name: 'deploy',
    description: 'Deploys the app',
    parameters: { type: 'object', properties: { env: { type: 'string' } } },
    needsApproval: true,
    execute: (args) => {
      deployed.push(args);
      return { deployed: args.env };
    },
  };
  const lookup: Tool<{ key: string }> = {
    name: 'lookup',
    description: 'Looks a key up',
    parameters: { type: 'object', properties: { key: { type: 'string' } } },
    execute: (args) => ({ value: `value of ${args.key}` }),
  };
  const agent = createAgent({
    name: 'route-test',
    model: ({ principal, metadata }) => {
      modelSaw.push(principal);
      metadataSaw.push(metadata);
      return echoModel();
    },
    instructions: ({ principal }) => {
      instructionsSaw.push(principal);
      return 'Answer briefly.';
    },
    tools: [deploy, lookup],
    store: memoryStore(),
  });
  return { agent, modelSaw, instructionsSaw, metadataSaw, deployed };
}

/** A session that waits on a `deploy` approval, made directly on the agent (not through a route). */
export async function pausedSession(agent: Agent, sessionId: string, principal?: Principal): Promise<RunResult> {
  const result = await agent.send(DEPLOY_MESSAGE, { sessionId, principal });
  if (result.status !== 'awaiting-approval') throw new Error('expected the deploy call to wait for approval');
  return result;
}

/** The server-sent events of a stream body as `{ event?, data }`, in order. */
export async function readEvents(response: Response): Promise<{ event?: string; data: string }[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const fields: { event?: string; data: string } = { data: '' };
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) fields.event = line.slice('event: '.length);
        else if (line.startsWith('data: ')) fields.data = line.slice('data: '.length);
        else throw new Error(`unexpected server-sent-event line: ${line}`);
      }
      return fields;
    });
}
