// @ai-sdk/anthropic's messages model (anthropic(), POST /v1/messages) against a local server speaking its wire.
import { providerScenarios } from '../../helpers/ai-sdk-wire.ts';
import { anthropicWire } from '../../helpers/provider-wires.ts';

providerScenarios(anthropicWire);
