// @ai-sdk/openai's chat model (openai.chat(), POST /v1/chat/completions) against a local server speaking its wire.
import { providerScenarios } from '../../helpers/ai-sdk-wire.ts';
import { openAIChatWire } from '../../helpers/provider-wires.ts';

providerScenarios(openAIChatWire);
