// @ai-sdk/openai's responses model (openai.responses(), POST /v1/responses) against a local server speaking its wire.
import { providerScenarios } from '../../helpers/ai-sdk-wire.ts';
import { openAIResponsesWire } from '../../helpers/provider-wires.ts';

providerScenarios(openAIResponsesWire);
