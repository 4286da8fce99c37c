// Tool results reach a real AI SDK provider as the AI SDK's own generateText sends them (design
// §21): @ai-sdk/openai (chat completions and responses) pointed at a local server speaking its
// wire; the tool messages of the second request compared, for a tool returning an object and one
// returning a string.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, jsonSchema, stepCountIs, tool as aiTool } from 'ai';
import { createAgent, tool } from '../../../src/index.ts';
import { wireServer, type Wire } from '../../helpers/ai-sdk-wire.ts';
import { openAIChatWire, openAIResponsesWire } from '../../helpers/provider-wires.ts';

type Input = { city: string };
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const;
const outputs: Record<string, (input: Input) => unknown> = {
  weather: ({ city }) => ({ city, celsius: 21 }),
  greet: ({ city }) => `Hello ${city}`,
};

/** The entries of a request body that carry tool results. */
const toolResults = (body: Record<string, unknown>) =>
  ((body.messages ?? body.input) as Record<string, unknown>[]).filter(
    (entry) => entry.role === 'tool' || entry.type === 'function_call_output',
  );

for (const wire of [openAIChatWire, openAIResponsesWire] as Wire[]) {
  for (const name of Object.keys(outputs)) {
    test(`${wire.name}: a tool returning ${name === 'weather' ? 'an object' : 'a string'} reaches the provider as generateText sends it`, async () => {
      const script = () => [wire.toolCall('call_1', name, '{"city":"Paris"}', [5, 3]), wire.text('done', [9, 2])];
      const byAiSdk = await wireServer(script());
      const byAgent = await wireServer(script());
      try {
        await generateText({
          model: wire.model(byAiSdk.baseURL) as never,
          prompt: 'hi',
          stopWhen: stepCountIs(2),
          tools: {
            [name]: aiTool({ description: name, inputSchema: jsonSchema<Input>(schema), execute: outputs[name]! }),
          },
        });
        await createAgent({
          name: 't',
          model: wire.model(byAgent.baseURL),
          tools: [
            tool({ name, description: name, parameters: schema, execute: (input) => outputs[name]!(input as Input) }),
          ],
        }).send('hi');
        assert.equal(byAgent.seen.length, 2);
        const sent = toolResults(byAgent.seen[1]!.body);
        assert.equal(sent.length, 1);
        assert.deepEqual(sent, toolResults(byAiSdk.seen[1]!.body));
      } finally {
        await byAiSdk.close();
        await byAgent.close();
      }
    });
  }
}
