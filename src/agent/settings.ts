// Generation settings (design §21): checked once for a static agent, per run for a settings function.
import { checkOptionNames } from '../auth/internal.ts';
import { type Fail, invalidAgent } from './errors.ts';
import { isPlainObject } from './tools.ts';
import type { ModelSettings } from './types.ts';
import { isNonEmptyString } from './shapes.ts';

const isNumber = (value: unknown, max = Infinity): boolean =>
  typeof value === 'number' && value >= 0 && value <= max && value !== Infinity;

/** Each setting's check, and what it must be. */
const SETTINGS: Record<string, [(value: unknown) => boolean, string]> = {
  temperature: [(value) => isNumber(value), 'a number, 0 or more'],
  maxOutputTokens: [(value) => Number.isSafeInteger(value) && (value as number) > 0, 'a positive whole number'],
  topP: [(value) => isNumber(value, 1), 'a number from 0 to 1'],
  stopSequences: [
    (value) => Array.isArray(value) && value.every((stop) => isNonEmptyString(stop)),
    'a list of non-empty strings',
  ],
  headers: [(value) => isPlainObject(value), 'an object of header names to strings'],
};
const NAMES = Object.keys(SETTINGS);
const NO_SETTINGS: Readonly<ModelSettings> = Object.freeze({});

/**
 * A frozen copy of `value` as settings, or `fail`'s error naming what is wrong (`source`: where
 * they came from): `AuthConfigError` at creation, `INVALID_AGENT` for a settings function's result.
 */
export function checkSettings(value: unknown, source: string, fail: Fail = invalidAgent): Readonly<ModelSettings> {
  if (value === undefined) return NO_SETTINGS;
  if (!isPlainObject(value)) throw fail(`${source} must be an object of ${NAMES.join(', ')}`);
  checkOptionNames(source, value, NAMES, fail);
  const settings: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(value)) {
    if (setting === undefined) continue;
    const [valid, expected] = SETTINGS[name]!;
    if (!valid(setting)) throw fail(`${source}: ${name} must be ${expected}`);
    settings[name] =
      name === 'headers'
        ? checkHeaders(setting, `${source}: headers`, fail)
        : Object.freeze(Array.isArray(setting) ? [...setting] : setting);
  }
  return Object.freeze(settings) as Readonly<ModelSettings>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A frozen copy of extra HTTP headers, names lower-cased: names are header tokens, values strings without line breaks (never shown in an error). */
export function checkHeaders(value: unknown, source: string, fail: Fail = invalidAgent): Record<string, string> {
  if (!isPlainObject(value)) throw fail(`${source} must be an object of header names to strings`);
  const headers: Record<string, string> = {};
  for (const [name, text] of Object.entries(value)) {
    if (!TOKEN.test(name) || typeof text !== 'string' || /[\0\r\n]/.test(text))
      throw fail(`${source}: "${name.slice(0, 64)}" must be a header name with a string value without line breaks`);
    headers[name.toLowerCase()] = text;
  }
  return Object.freeze(headers);
}
