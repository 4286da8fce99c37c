/**
 * The tests every limit store passes (design §22, §25): a window counts within its limit and
 * refuses past it, counting nothing; a read (cost 0) counts nothing; keys and window lengths stay
 * apart; concurrent calls never over-admit; `settle` replaces a reservation or gives a slot back
 * in the window it was taken in (never below 0), and counts a late positive delta in the current
 * window; slots are leases (renewed, released once, given back after their ttl by a store shared
 * by processes). The memory store, the PostgreSQL store and the Durable Object store call
 * `limitStoreContract(name, open)`. Portable: no Node import.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LimitStore } from '../../src/http/limit-store.ts';

export interface LimitStoreUnderTest {
  store: LimitStore;
  /** Whether slots end `ttlSec` after they were last taken (a store shared by processes); the memory store keeps them until released. */
  expiresLeases: boolean;
}

const ANY = Number.MAX_SAFE_INTEGER;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let unique = 0;
/** A key no other test of this run uses (stores may be shared between tests). */
const fresh = (name: string) => `${name}:${Date.now()}:${++unique}`;

export function limitStoreContract(name: string, open: () => Promise<LimitStoreUnderTest>): void {
  test(`${name} (limit store contract): a window counts within its limit, then refuses and counts nothing`, async () => {
    const { store } = await open();
    const key = fresh('window');
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await store.hit(key, 3600, 1, 3));
    assert.deepEqual(
      answers.map((answer) => answer.allowed),
      [true, true, true, false],
    );
    assert.deepEqual(
      answers.slice(0, 3).map((answer) => answer.count),
      [1, 2, 3],
    );
    assert.ok(answers[3]!.count >= 3, 'a refusal reports at least the limit');
    for (const answer of answers)
      assert.ok(answer.resetSec > 0 && answer.resetSec <= 3600, `resetSec ${answer.resetSec} is within the window`);
    // A cost that would pass the limit is refused whole, and the window keeps its count.
    const other = fresh('cost');
    assert.equal((await store.hit(other, 3600, 5, 10)).count, 5);
    const refused = await store.hit(other, 3600, 6, 10);
    assert.equal(refused.allowed, false);
    assert.equal((await store.hit(other, 3600, 5, 10)).count, 10);
  });

  test(`${name} (limit store contract): cost 0 reads the window without counting; an unlimited add always counts`, async () => {
    const { store } = await open();
    const key = fresh('read');
    const empty = await store.hit(key, 3600, 0, 0);
    assert.deepEqual([empty.allowed, empty.count], [true, 0]);
    await store.hit(key, 3600, 1000, ANY);
    await store.hit(key, 3600, 234, ANY);
    const read = await store.hit(key, 3600, 0, 1233);
    assert.deepEqual([read.allowed, read.count], [false, 1234]);
    assert.equal((await store.hit(key, 3600, 0, 1234)).allowed, true);
    assert.equal((await store.hit(key, 3600, 0, 1234)).count, 1234, 'reads counted nothing');
  });

  test(`${name} (limit store contract): keys, and one key's window lengths, never share a count`, async () => {
    const { store } = await open();
    const base = fresh('apart');
    const keys = [base, `${base}x`, `${base}\u0000`, `${base}\ud800`, `${base}\udc00`, `${base}"'\\;--`, `${base}😀`];
    for (const [index, key] of keys.entries())
      assert.equal((await store.hit(key, 3600, index + 1, ANY)).count, index + 1, JSON.stringify(key));
    for (const [index, key] of keys.entries())
      assert.equal((await store.hit(key, 3600, 0, ANY)).count, index + 1, JSON.stringify(key));
    assert.equal((await store.hit(base, 60, 0, ANY)).count, 0, 'the same key with another window length starts at 0');
  });

  test(`${name} (limit store contract): a window frees when resetSec says`, async () => {
    const { store } = await open();
    const key = fresh('reset');
    // Start early in a 1-second window, so the wait is short and the count is not cut by a boundary.
    let first = await store.hit(key, 1, 0, 0);
    if (first.resetSec < 0.6) await sleep(first.resetSec * 1000 + 20);
    first = await store.hit(key, 1, 1, 1);
    assert.equal(first.allowed, true);
    const refused = await store.hit(key, 1, 1, 1);
    assert.equal(refused.allowed, false);
    assert.ok(refused.resetSec > 0 && refused.resetSec <= 1);
    await sleep(refused.resetSec * 1000 + 50);
    const again = await store.hit(key, 1, 1, 1);
    assert.deepEqual([again.allowed, again.count], [true, 1]);
  });

  test(`${name} (limit store contract): 40 hits at once on a limit of 7 admit exactly 7`, async () => {
    const { store } = await open();
    const key = fresh('race');
    const answers = await Promise.all(Array.from({ length: 40 }, () => store.hit(key, 3600, 1, 7)));
    assert.equal(answers.filter((answer) => answer.allowed).length, 7);
    assert.deepEqual(
      answers
        .filter((answer) => answer.allowed)
        .map((answer) => answer.count)
        .sort((a, b) => a - b),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.equal((await store.hit(key, 3600, 0, ANY)).count, 7);
  });

  test(`${name} (limit store contract): reserve counts cost and as much of more as fits within the limit, or nothing past it (design §25)`, async () => {
    const { store } = await open();
    const key = fresh('reserve');
    const first = await store.reserve!(key, 3600, 10, 50, 100);
    assert.deepEqual([first.allowed, first.count, first.reserved], [true, 60, 60], 'cost and all of more');
    const second = await store.reserve!(key, 3600, 10, 50, 100);
    assert.deepEqual([second.allowed, second.count, second.reserved], [true, 100, 40], 'cost and the 30 left of more');
    const refused = await store.reserve!(key, 3600, 1, 0, 100);
    assert.deepEqual([refused.allowed, refused.reserved], [false, 0]);
    assert.equal((await store.hit(key, 3600, 0, ANY)).count, 100, 'a refused reservation counts nothing');
    // A reservation is replaced by what was spent: settle the difference in its window.
    const settled = await store.settle(key, 3600, second.start, 25 - second.reserved);
    assert.equal(settled.count, 85);
    assert.equal((await store.reserve!(key, 3600, 20, 1000, 100)).allowed, false, '85 + 20 passes 100');
    const fits = await store.reserve!(key, 3600, 15, 1000, 100);
    assert.deepEqual([fits.allowed, fits.count, fits.reserved], [true, 100, 15], 'cost alone, nothing left for more');
  });

  test(`${name} (limit store contract): 30 reservations at once of 10 + up to 1,000 on a limit of 5,000 never pass it; all but one reserve in full`, async () => {
    const { store } = await open();
    const key = fresh('reserve-at-once');
    const answers = await Promise.all(Array.from({ length: 30 }, () => store.reserve!(key, 3600, 10, 1000, 5000)));
    const admitted = answers.filter((answer) => answer.allowed);
    assert.equal(
      admitted.reduce((sum, answer) => sum + answer.reserved, 0),
      5000,
    );
    assert.equal(admitted.filter((answer) => answer.reserved !== 1010).length, 1, 'one took what was left');
    assert.equal(admitted.length, 5);
    assert.equal((await store.hit(key, 3600, 0, ANY)).count, 5000);
  });

  test(`${name} (limit store contract): settle adds a delta to the window a hit counted in (start), never below 0 and never refused`, async () => {
    const { store } = await open();
    const key = fresh('settle');
    const reserved = await store.hit(key, 3600, 500, 1000);
    assert.equal(reserved.allowed, true);
    assert.equal(reserved.start % 3600, 0, 'start is the start of the fixed window');
    const settled = await store.settle(key, 3600, reserved.start, 1200 - 500);
    assert.deepEqual([settled.allowed, settled.count, settled.start], [true, 1200, reserved.start]);
    assert.ok(settled.resetSec > 0 && settled.resetSec <= 3600);
    assert.equal(
      (await store.hit(key, 3600, 1, 1000)).allowed,
      false,
      'a settle may pass the limit; the next hit sees it',
    );
    assert.equal((await store.settle(key, 3600, reserved.start, -5000)).count, 0, 'never below 0');
    assert.equal((await store.hit(key, 3600, 0, ANY)).count, 0);
    // A slot taken and given back leaves the window as it was.
    const slot = fresh('refund');
    const taken = await store.hit(slot, 3600, 1, 5);
    assert.equal((await store.settle(slot, 3600, taken.start, -1)).count, 0);
    const never = await store.settle(fresh('never-counted'), 3600, taken.start, -1);
    assert.deepEqual([never.allowed, never.count], [true, 0], 'a refund of a key never counted changes nothing');
  });

  test(`${name} (limit store contract): 300 slots taken at once on a limit of 5 admit exactly 5; settles at once leave the exact total`, async () => {
    const { store } = await open();
    const key = fresh('take');
    const taken = await Promise.all(Array.from({ length: 300 }, () => store.hit(key, 3600, 1, 5)));
    assert.equal(taken.filter((answer) => answer.allowed).length, 5);
    const turns = fresh('turns');
    const reservations = await Promise.all(Array.from({ length: 20 }, () => store.hit(turns, 3600, 100, ANY)));
    await Promise.all(reservations.map((reserved, n) => store.settle(turns, 3600, reserved.start, n - 100)));
    assert.equal(
      (await store.hit(turns, 3600, 0, ANY)).count,
      190,
      'each reservation replaced by what it spent (0 to 19)',
    );
  });

  test(`${name} (limit store contract): settling a window that has ended counts a positive delta in the current window, and a negative one nowhere`, async () => {
    const { store } = await open();
    const key = fresh('late');
    let first = await store.hit(key, 1, 0, 0);
    if (first.resetSec < 0.6) await sleep(first.resetSec * 1000 + 20);
    first = await store.hit(key, 1, 4, ANY);
    await sleep(first.resetSec * 1000 + 50);
    const refunded = await store.settle(key, 1, first.start, -4);
    assert.deepEqual(
      [refunded.count, refunded.start > first.start],
      [0, true],
      'the ended window is not the current one',
    );
    const late = await store.settle(key, 1, first.start, 3);
    assert.equal(late.count, 3);
    assert.equal((await store.hit(key, 1, 0, ANY)).count, 3);
  });

  test(`${name} (limit store contract): slots: at most limit leases; the same lease again keeps its slot; release frees it once`, async () => {
    const { store } = await open();
    const key = fresh('slots');
    assert.equal(await store.acquire(key, 'a', 2, 60), true);
    assert.equal(await store.acquire(key, 'b', 2, 60), true);
    assert.equal(await store.acquire(key, 'c', 2, 60), false);
    assert.equal(await store.acquire(key, 'a', 2, 60), true, 'renewing a held lease is never refused');
    await store.release(key, 'unknown');
    assert.equal(await store.acquire(key, 'c', 2, 60), false, 'releasing an unknown lease frees nothing');
    await store.release(key, 'a');
    await store.release(key, 'a');
    assert.equal(await store.acquire(key, 'c', 2, 60), true);
    assert.equal(await store.acquire(key, 'd', 2, 60), false, 'a lease released twice frees one slot');
    assert.equal(await store.acquire(`${key}-other`, 'a', 1, 60), true, 'another key has slots of its own');
    const many = fresh('slot-race');
    const taken = await Promise.all(Array.from({ length: 30 }, (_, i) => store.acquire(many, `lease-${i}`, 4, 60)));
    assert.equal(taken.filter(Boolean).length, 4);
  });

  test(`${name} (limit store contract): a slot a shared store holds ends ttlSec after it was last taken`, async () => {
    const { store, expiresLeases } = await open();
    if (!expiresLeases) {
      // Process memory goes with the process: its slots are released, never left behind.
      const key = fresh('ttl-memory');
      assert.equal(await store.acquire(key, 'a', 1, 1), true);
      await sleep(1100);
      assert.equal(await store.acquire(key, 'b', 1, 1), false);
      return;
    }
    const key = fresh('ttl');
    assert.equal(await store.acquire(key, 'gone', 1, 1), true);
    assert.equal(await store.acquire(key, 'next', 1, 1), false);
    await sleep(1200);
    assert.equal(await store.acquire(key, 'next', 1, 60), true, 'the lease of a process that died ends');
    assert.equal(await store.acquire(key, 'other', 1, 60), false);
  });
}
