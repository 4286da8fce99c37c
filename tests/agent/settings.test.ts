// createAgent({ settings }) (design §21): a value or a function of the run context, closed and
// checked, handed to every model kind as ModelRequest.settings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentError, AuthConfigError, createAgent, echoModel } from '../../src/index.ts';
import type { Model, ModelDelta, ModelRequest, Principal } from '../../src/index.ts';

/** A model that keeps each request's settings, generating or streaming. */
function recording(): Model & { seen: unknown[] } {
  const seen: unknown[] = [];
  return {
    seen,
    async generate(request: ModelRequest) {
      seen.push(request.settings);
      return { text: 'ok' };
    },
    async *stream(request: ModelRequest): AsyncIterable<ModelDelta> {
      seen.push(request.settings);
      yield { type: 'text', text: 'ok' };
    },
  };
}

/** What a settings function's result that cannot work fails the run with. */
const isInvalidAgent = (pattern: RegExp) => (error: unknown) =>
  error instanceof AgentError && error.code === 'INVALID_AGENT' && pattern.test(error.message);
/** What createAgent throws for static settings that cannot work (design §30). */
const isConfigError = (pattern: RegExp) => (error: unknown) =>
  error instanceof AuthConfigError && error.code === 'AGENT_AUTH_CONFIG_INVALID' && pattern.test(error.message);

test('static settings reach every model request, generated or streamed, as a frozen copy', async () => {
  const settings = {
    temperature: 0.4,
    maxOutputTokens: 200,
    topP: 0.8,
    stopSequences: ['STOP'],
    headers: { 'X-Team': 'blue' },
  };
  const model = recording();
  const agent = createAgent({ name: 't', model, settings });
  settings.stopSequences.push('LATER');
  settings.headers['X-Team'] = 'changed';
  await agent.send('hi');
  await agent.send('hi', { onEvent: () => {} });
  const expected = {
    temperature: 0.4,
    maxOutputTokens: 200,
    topP: 0.8,
    stopSequences: ['STOP'],
    headers: { 'x-team': 'blue' },
  };
  assert.deepEqual(model.seen, [expected, expected]);
  const [seen] = model.seen as { stopSequences: string[]; headers: object }[];
  assert.ok(Object.isFrozen(seen) && Object.isFrozen(seen!.stopSequences) && Object.isFrozen(seen!.headers));
});

test('without settings a model request carries empty settings', async () => {
  const model = recording();
  await createAgent({ name: 't', model }).send('hi');
  assert.deepEqual(model.seen, [{}]);
});

test('a settings function of the run context chooses per run (it sees the principal), and its result is checked', async () => {
  const model = recording();
  const agent = createAgent({
    name: 't',
    model,
    settings: async ({ principal }) =>
      principal?.id === 'ada' ? { temperature: 0, maxOutputTokens: 50 } : { temperature: 1 },
  });
  const ada: Principal = { id: 'ada', type: 'user', authenticator: 'basic' };
  await agent.send('hi', { principal: ada });
  await agent.send('hi');
  assert.deepEqual(model.seen, [{ temperature: 0, maxOutputTokens: 50 }, { temperature: 1 }]);
  const broken = createAgent({ name: 't', model, settings: () => ({ temprature: 1 }) as never });
  await assert.rejects(
    broken.send('hi'),
    isInvalidAgent(/^the settings function result: unknown option "temprature" \(did you mean "temperature"\?\)/),
  );
  await assert.rejects(
    createAgent({ name: 't', model, settings: () => 'hot' as never }).send('hi'),
    isInvalidAgent(/the settings function result must be an object/),
  );
});

test('settings are a closed object: an unknown key is AuthConfigError naming the nearest, and a misspelled settings too', () => {
  assert.throws(
    () => createAgent({ name: 't', model: echoModel(), settings: { maxTokens: 10 } as never }),
    isConfigError(
      /createAgent\(\): settings: unknown option "maxTokens" \(known: temperature, maxOutputTokens, topP, stopSequences, headers\)/,
    ),
  );
  assert.throws(
    () => createAgent({ name: 't', model: echoModel(), settings: { topp: 0.5 } as never }),
    isConfigError(/unknown option "topp" \(did you mean "topP"\?\)/),
  );
  assert.throws(
    () => createAgent({ name: 't', model: echoModel(), setings: {} } as never),
    isConfigError(/unknown option "setings" \(did you mean "settings"\?\)/),
  );
});

test('each setting is checked: a value that cannot work is AuthConfigError naming it, never showing a header value', () => {
  const cases: [unknown, RegExp][] = [
    [{ temperature: -0.1 }, /temperature must be a number, 0 or more/],
    [{ temperature: Number.NaN }, /temperature must be/],
    [{ temperature: '0.5' }, /temperature must be/],
    [{ maxOutputTokens: 0 }, /maxOutputTokens must be a positive whole number/],
    [{ maxOutputTokens: 1.5 }, /maxOutputTokens must be/],
    [{ topP: 1.5 }, /topP must be a number from 0 to 1/],
    [{ stopSequences: 'END' }, /stopSequences must be a list of non-empty strings/],
    [{ stopSequences: [''] }, /stopSequences must be/],
    [{ headers: ['x'] }, /headers must be an object/],
    [{ headers: { 'bad name': 'v' } }, /headers: "bad name" must be a header name with a string value/],
    [
      { headers: { 'x-key': 'sk-secret\r\nInjected: 1' } },
      /headers: "x-key" must be a header name with a string value without line breaks/,
    ],
    [{ headers: { 'x-key': 42 } }, /headers: "x-key" must be/],
    ['hot', /createAgent\(\): settings must be an object/],
  ];
  for (const [settings, pattern] of cases) {
    assert.throws(
      () => createAgent({ name: 't', model: echoModel(), settings: settings as never }),
      (error: unknown) => {
        assert.ok(isConfigError(pattern)(error), `${JSON.stringify(settings)}: ${String(error)}`);
        assert.doesNotMatch((error as Error).message, /sk-secret/);
        return true;
      },
    );
  }
});
