import { encodeBase64url } from '../auth/internal.ts';
import { invalidInput } from './errors.ts';

const ID_BYTES = 16;
/** Ids made from one `getRandomValues` call. */
const BATCH = 256;
/** Base64url of each single byte: the last two characters of a 16-byte id's encoding. */
let lastChars: string[] | undefined;

/**
 * The 22-character ids of `bytes` (`16 × n` random bytes), each exactly
 * `encodeBase64url(16 bytes)`: 15 bytes are 20 whole characters, so the 15-byte heads of all
 * ids (the first `15 × n` bytes) are encoded in one call and cut apart, and the 16th byte (one
 * of the last `n` bytes) adds its two characters.
 */
export function idsOf(bytes: Uint8Array): string[] {
  const count = bytes.length / ID_BYTES;
  if (!Number.isInteger(count))
    throw invalidInput(`idsOf(): the bytes must be a multiple of 16 long; got ${bytes.length} bytes`);
  lastChars ??= Array.from({ length: 256 }, (_, byte) => encodeBase64url(Uint8Array.of(byte)));
  const heads = encodeBase64url(bytes.subarray(0, count * (ID_BYTES - 1)));
  const ids = new Array<string>(count);
  for (let i = 0; i < count; i++)
    ids[i] = heads.slice(i * 20, i * 20 + 20) + lastChars[bytes[count * (ID_BYTES - 1) + i]!];
  return ids;
}

let ready: string[] = [];

/**
 * A random 128-bit id, base64url without padding (22 characters): unguessable, so usable as a
 * session id. Ids are made 256 at a time from one `crypto.getRandomValues` call, each from its
 * own 16 bytes, and handed out once: a `getRandomValues` call and a typed array per id cost more
 * than the rest of a send (docs/design.md §30, "Speed tricks and what they bought").
 */
export function randomId(): string {
  if (ready.length === 0) ready = idsOf(crypto.getRandomValues(new Uint8Array(ID_BYTES * BATCH)));
  return ready.pop()!;
}
