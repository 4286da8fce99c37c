// SPDX-License-Identifier: MIT
// SHA-256 (FIPS 180-4) in plain JavaScript, synchronous, for apiToken() and basic(): per
// request they hash what the client sent, and an awaited `crypto.subtle.digest` is a thread-pool
// job per call, a hundred times slower for a token (docs/design.md §30, "Speed tricks and what
// they bought"); the audit log hashes each record with it too. Inputs that fit use a kept buffer.
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
// Scratch space reused by every call (the function is synchronous, so calls never overlap). An
// input that fits (a string of up to 320 UTF-16 units is at most 960 bytes of UTF-8) is encoded
// straight into MESSAGE, which is zeroed again before the call returns; a longer one gets a
// buffer of its own, so an audit record (about 420 bytes) is hashed without a copy.
const W = /* @__PURE__ */ new Int32Array(64);
const MESSAGE = /* @__PURE__ */ new Uint8Array(1024);
const MESSAGE_UNITS = 320;

/** SHA-256 of `data` (a string as its UTF-8 bytes): turns a secret of any length into a fixed-size value to compare. */
export function sha256(data: string | Uint8Array): Uint8Array {
  // The message, a 0x80 byte, zeros, and the length in bits as a 64-bit big-endian number.
  let padded = MESSAGE;
  let length: number;
  if (typeof data === 'string' && data.length <= MESSAGE_UNITS) length = encoder.encodeInto(data, MESSAGE).written;
  else {
    const input = typeof data === 'string' ? encoder.encode(data) : data;
    length = input.length;
    if (length + 9 > MESSAGE.length) padded = new Uint8Array(Math.ceil((length + 9) / 64) * 64);
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
  // The eight words of the hash as locals, and each word of the message schedule made in the
  // round that uses it: faster than words kept in an Int32Array (docs/design.md §30, "Speed tricks").
  let h0 = INITIAL[0]!;
  let h1 = INITIAL[1]!;
  let h2 = INITIAL[2]!;
  let h3 = INITIAL[3]!;
  let h4 = INITIAL[4]!;
  let h5 = INITIAL[5]!;
  let h6 = INITIAL[6]!;
  let h7 = INITIAL[7]!;
  const w = W;
  for (let offset = 0; offset < end; offset += 64) {
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let k = h7;
    for (let t = 0; t < 64; t++) {
      let word: number;
      if (t < 16) {
        const i = offset + 4 * t;
        word = (padded[i]! << 24) | (padded[i + 1]! << 16) | (padded[i + 2]! << 8) | padded[i + 3]!;
      } else {
        const early = w[t - 15]!;
        const late = w[t - 2]!;
        const sigma0 = ((early >>> 7) | (early << 25)) ^ ((early >>> 18) | (early << 14)) ^ (early >>> 3);
        const sigma1 = ((late >>> 17) | (late << 15)) ^ ((late >>> 19) | (late << 13)) ^ (late >>> 10);
        word = (w[t - 16]! + sigma0 + w[t - 7]! + sigma1) | 0;
      }
      w[t] = word;
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (k + s1 + ((e & f) ^ (~e & g)) + K[t]! + word) | 0;
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
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + k) | 0;
  }
  if (padded === MESSAGE) MESSAGE.fill(0, 0, end);
  w.fill(0);
  const digest = new Uint8Array(32);
  const words = [h0, h1, h2, h3, h4, h5, h6, h7];
  for (let i = 0; i < 32; i++) digest[i] = words[i >> 2]! >>> (24 - 8 * (i & 3));
  return digest;
}
