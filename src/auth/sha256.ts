// SPDX-License-Identifier: MIT
// SHA-256 (FIPS 180-4) in plain JavaScript, synchronous, for apiToken() and basic(): per
// request they hash what the client sent, and an awaited `crypto.subtle.digest` is a thread-pool
// job per call, a hundred times slower for a token (docs/design.md §30, "Speed tricks and what
// they bought"). Short inputs use a kept buffer, and the digest is written a byte per step.
// Every step is an add, rotate or xor of 32-bit words, with no table indexed by the data, so the
// time depends on the length of the input alone.
// FIPS 180-4 §4.2.2 and §5.3.3: K is the first 32 bits of the fractional parts of the cube roots of
// the first 64 primes, INITIAL those of the square roots of the first 8. Computed once, exactly: the
// floating-point estimate is corrected in integers (a test checks the digests of the NIST vectors).
// Made in calls marked pure, so that a bundle which never hashes (a vendored src/auth, without the
// package's "sideEffects") leaves this module out (design §23).
function primes(count: number): number[] {
  const found: number[] = [];
  for (let n = 2; found.length < count; n++) if (found.every((p) => n % p > 0)) found.push(n);
  return found;
}
/** The first 32 bits after the point of prime^(1/root): ⌊prime^(1/root) · 2³²⌋ mod 2³², the largest x with x^root ≤ prime · 2^(32·root). */
function fractionBits(prime: number, root: bigint): number {
  const scaled = BigInt(prime) << (32n * root);
  let x = BigInt(Math.floor(prime ** (1 / Number(root)) * 2 ** 32));
  while (x ** root > scaled) x--;
  while ((x + 1n) ** root <= scaled) x++;
  return Number(x & 0xffffffffn);
}
const K = /* @__PURE__ */ Int32Array.from(/* @__PURE__ */ primes(64), (p) => fractionBits(p, 3n));
const INITIAL = /* @__PURE__ */ Int32Array.from(/* @__PURE__ */ primes(8), (p) => fractionBits(p, 2n));
const encoder = /* @__PURE__ */ new TextEncoder();
// Scratch space reused by every call (the function is synchronous, so calls never overlap). A
// string of up to 64 UTF-16 units is at most 192 bytes of UTF-8: it is encoded straight into
// MESSAGE, which is zeroed again before the call returns.
const H = /* @__PURE__ */ new Int32Array(8);
const W = /* @__PURE__ */ new Int32Array(64);
const MESSAGE = /* @__PURE__ */ new Uint8Array(256);

/** SHA-256 of `data` (a string as its UTF-8 bytes): turns a secret of any length into a fixed-size value to compare. */
export function sha256(data: string | Uint8Array): Uint8Array {
  // The message, a 0x80 byte, zeros, and the length in bits as a 64-bit big-endian number.
  let padded = MESSAGE;
  let length: number;
  if (typeof data === 'string' && data.length <= 64) length = encoder.encodeInto(data, MESSAGE).written;
  else {
    const input = typeof data === 'string' ? encoder.encode(data) : data;
    length = input.length;
    padded = new Uint8Array(Math.ceil((length + 9) / 64) * 64);
    padded.set(input);
  }
  const end = Math.ceil((length + 9) / 64) * 64;
  padded[length] = 0x80;
  const high = Math.floor(length / 0x20000000);
  const low = (length * 8) >>> 0;
  for (let i = 0; i < 4; i++) {
    padded[end - 8 + i] = high >>> (24 - 8 * i);
    padded[end - 4 + i] = low >>> (24 - 8 * i);
  }
  const h = H;
  const w = W;
  h.set(INITIAL);
  for (let offset = 0; offset < end; offset += 64) {
    for (let t = 0, i = offset; t < 16; t++, i += 4)
      w[t] = (padded[i]! << 24) | (padded[i + 1]! << 16) | (padded[i + 2]! << 8) | padded[i + 3]!;
    for (let t = 16; t < 64; t++) {
      const a = w[t - 15]!;
      const b = w[t - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[t] = (w[t - 16]! + s0 + w[t - 7]! + s1) | 0;
    }
    let a = h[0]!,
      b = h[1]!,
      c = h[2]!,
      d = h[3]!,
      e = h[4]!,
      f = h[5]!,
      g = h[6]!,
      k = h[7]!;
    for (let t = 0; t < 64; t++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (k + s1 + ((e & f) ^ (~e & g)) + K[t]! + w[t]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0]! += a;
    h[1]! += b;
    h[2]! += c;
    h[3]! += d;
    h[4]! += e;
    h[5]! += f;
    h[6]! += g;
    h[7]! += k;
  }
  if (padded === MESSAGE) MESSAGE.fill(0, 0, end);
  const digest = new Uint8Array(32);
  for (let i = 0; i < 32; i++) digest[i] = h[i >> 2]! >>> (24 - 8 * (i & 3));
  return digest;
}
