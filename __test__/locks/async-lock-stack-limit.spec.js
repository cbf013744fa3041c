'use strict';
// AsyncLock near the stack limit, where any call can throw a RangeError.
//
// A contended unlock() (and forceUnlock(), and executeLocked's own unlock)
// must not leave the lock free while its queued waiter sleeps on, woken by
// nobody: storing 0 and then calling a notify chain (index.js's wrapper,
// the skipping notify, the binding) that throws after the store would. A
// release function whose unlock threw must not count as released, or every
// retry would do nothing and the lock stay held.
//
// Each case runs the call at every depth in a range that reaches from "the
// call cannot even start" to "it all fits", with a waiter queued behind the
// holder. A throw must leave the lock held by the caller, who can retry; a
// return must leave the waiter woken (off the registry's queue).

const assert = require('assert');
const api = require('../..');
const { until, lockWithFailingNotify, contendedHere, nearTheLimit } = require('../helpers');

const { AsyncLock, waitersForTesting } = api;

/**
 * Calls `trial(shift)` (an async function returning what the call did: 'ok'
 * or an error's name) at depths `shift` frames of `rec` above exhaustion:
 * coarsely upwards until the call fits, then every depth from well below
 * that to above it, where it starts to fit in parts. Returns the tally.
 */
async function scan(trial) {
  let fits = 0;
  while ((await trial(fits)) !== 'ok') {
    fits += 16;
    if (fits > 4000) throw new Error('the call never fit');
  }
  const outs = {};
  for (let shift = Math.max(0, fits - 128); shift < fits + 64; shift++) {
    const out = await trial(shift);
    outs[out] = (outs[out] || 0) + 1;
  }
  return outs;
}

/** Runs `action` `shift` frames above stack exhaustion; 'ok' or the error's name. */
function atDepth(shift, action) {
  let target = -1;
  let out = null;
  function rec(n) {
    try {
      rec(n + 1);
    } catch (_) {
      if (target < 0) target = n - shift;
    }
    if (n === target && out === null) {
      try {
        action();
        out = 'ok';
      } catch (error) {
        out = error.name;
      }
    }
  }
  rec(0);
  return out;
}

const queued = (lock) => waitersForTesting(lock.i32a, lock.index).registry;
// The lock's word without its FAIR bit (lib/owned-word.js): a waiter that
// has waited 0.5 ms sets it, which a loaded machine's waiter may have.
const heldWord = (lock) => Atomics.load(lock.i32a, lock.index) & 0x7fffffff;

describe('AsyncLock near the stack limit', function () {
  this.timeout(60000);

  for (const kind of ['unlock', 'release', 'forceUnlock']) {
    it(`a contended ${kind}() that throws leaves the lock held; one that returns woke the waiter`, async () => {
      const outs = await scan(async (shift) => {
        const lock = new AsyncLock();
        const holder = new AsyncLock(lock.sab);
        const release = holder.lockGuard();
        const waiter = lock.acquire();
        assert.strictEqual(queued(lock), 1);
        const call =
          kind === 'unlock' ? () => holder.unlock() : kind === 'release' ? release : () => holder.forceUnlock();
        const out = atDepth(shift, call);
        if (out !== 'ok') {
          assert.strictEqual(out, 'RangeError');
          // Still held, the waiter still queued: a retry from here releases it.
          assert.deepStrictEqual([shift, heldWord(lock), queued(lock)], [shift, contendedHere(), 1]);
          call();
        }
        assert.deepStrictEqual([shift, queued(lock)], [shift, 0], `after ${out}: the waiter was not woken`);
        (await waiter)();
        return out;
      });
      // The range reached from "nothing fits" to "all fits".
      assert.ok(outs.ok > 0 && outs.RangeError > 0, JSON.stringify(outs));
    });
  }

  it('unlock() with a take of the instance parked: one that throws leaves the lock held; one that returns has let the take go', async () => {
    const outs = await nearTheLimit('unlock-near-stack-limit.js');
    assert.deepStrictEqual(Object.keys(outs).sort(), ['RangeError', 'ok'], JSON.stringify(outs));
  });

  it('executeLocked(f) on a free lock that throws has taken nothing; one that returns ran f and released the lock', async () => {
    // Every depth from exhaustion up, one after another with no await in
    // between (as a program would), then the outcomes once all settled.
    // The fast path once took the lock before its async frame could start:
    // at one depth it threw with the word left at 1, held by nobody.
    const trials = [];
    for (let shift = 0; shift < 1500; shift++) {
      const lock = new AsyncLock();
      const trial = { shift, lock, ran: false, settled: false };
      trial.out = atDepth(shift, () => {
        const settle = () => (trial.settled = true);
        lock.executeLocked(() => (trial.ran = true)).then(settle, settle);
      });
      trials.push(trial);
    }
    await until(() => trials.every((t) => t.out !== 'ok' || t.settled), 'every call to settle');
    const outs = {};
    for (const { shift, lock, ran, out } of trials) {
      outs[out] = (outs[out] || 0) + 1;
      assert.deepStrictEqual([shift, out, Atomics.load(lock.i32a, 0)], [shift, out, AsyncLock.UNLOCKED], 'the lock stayed taken');
      // Thrown: nothing ran. Returned: f ran (it may itself have thrown
      // out of stack: its promise rejected then, with the lock released).
      if (out !== 'ok') assert.deepStrictEqual([shift, out, ran], [shift, 'RangeError', false]);
    }
    // The range reached from "nothing fits" to "all fits".
    assert.ok(outs.ok > 0 && outs.RangeError > 0, JSON.stringify(outs));
  });
});

// The same, deterministically: a notify that throws once, as the chain does
// near the stack limit. executeLocked's own unlock in its `finally` did not
// reach the limit in any depth tried (its call needs more stack than the
// unlock), so it is tested this way only.
describe('AsyncLock when the notify of an unlock throws', function () {
  const faulty = lockWithFailingNotify(() => new RangeError('Maximum call stack size exceeded'));
  const { AsyncLock } = faulty;
  const queuedOn = (lock, n) => until(() => queued(lock) === n, `${n} queued`);

  /** A lock another instance holds, with `lock.acquire()` queued behind it. */
  async function contended() {
    const lock = new AsyncLock();
    const holder = new AsyncLock(lock.sab);
    const release = holder.lockGuard();
    const waiter = lock.acquire();
    await queuedOn(lock, 1);
    return { lock, holder, release, waiter };
  }

  afterEach(() => {
    faulty.fail(0);
  });

  for (const kind of ['unlock', 'release', 'forceUnlock']) {
    it(`${kind}() throws with the lock still held and the waiter queued; a retry wakes it`, async () => {
      const { lock, holder, release, waiter } = await contended();
      const call = kind === 'unlock' ? () => holder.unlock() : kind === 'release' ? release : () => holder.forceUnlock();
      faulty.fail(1);
      assert.throws(call, RangeError);
      assert.strictEqual(heldWord(lock), contendedHere());
      assert.strictEqual(queued(lock), 1);
      call();
      assert.strictEqual(queued(lock), 0);
      (await waiter)();
      assert.strictEqual(lock.isLocked(), false);
    });
  }

  it("executeLocked's unlock that throws is retried after an await: f's result, the waiter woken", async () => {
    const lock = new AsyncLock();
    const other = new AsyncLock(lock.sab);
    let waiter;
    const result = await lock.executeLocked(async () => {
      waiter = other.acquire();
      await queuedOn(lock, 1);
      faulty.fail(1);
      return 'ran';
    });
    assert.strictEqual(result, 'ran');
    assert.strictEqual(faulty.left(), 0); // the first notify did fail
    (await waiter)();
    assert.strictEqual(lock.isLocked(), false);
  });

  for (const how of ['throws', 'rejects']) {
    it(`executeLocked's unlock that throws, after f ${how}, is retried after an await: f's error, the waiter woken`, async () => {
      const lock = new AsyncLock();
      const other = new AsyncLock(lock.sab);
      let waiter;
      const failure = new Error('f failed');
      const f =
        how === 'throws'
          ? () => {
              waiter = other.acquire();
              assert.strictEqual(queued(lock), 1); // queued at once: the word is 2
              faulty.fail(1);
              throw failure;
            }
          : async () => {
              waiter = other.acquire();
              await queuedOn(lock, 1);
              faulty.fail(1);
              throw failure;
            };
      await assert.rejects(lock.executeLocked(f), (error) => error === failure);
      assert.strictEqual(faulty.left(), 0); // the first notify did fail
      (await waiter)();
      assert.strictEqual(lock.isLocked(), false);
    });
  }

  it("executeLocked's unlock error still wins when f itself unlocked (misuse)", async () => {
    const lock = new AsyncLock();
    await assert.rejects(
      lock.executeLocked(() => lock.unlock()),
      { code: 'ERR_ASYNC_LOCK_NOT_HELD' }
    );
    assert.strictEqual(lock.isLocked(), false);
  });
});

// Out of stack, a call that failed once is followed by more that fail: a
// catch block's own calls need stack too, and the JIT does not promise that
// a call that fit once in a frame fits again later in it. Modelled here: from
// step `from` of a contended release on, every call the lock makes (the
// global Atomics read-modify-writes, notify, releaseLock) throws a
// RangeError. The free and the notify are one native call, which either
// throws at its entry (nothing done) or does both: an unlock that freed the
// word in JS and then notified, when the notify threw, would need a
// recovery compareExchange that may throw too, leaving the word free with
// its waiter asleep.
describe('AsyncLock when every step of a contended release from some point on throws out of stack', function () {
  const { createAsyncLock } = require('../../lib/async-lock');
  const binding = require('../../binding');
  const outOfStack = { from: Infinity, steps: 0 };
  const step = () => {
    if (outOfStack.steps++ >= outOfStack.from) throw new RangeError('Maximum call stack size exceeded');
  };
  const Lock = createAsyncLock({
    lockOwner: binding.lockOwner,
    lockWatch: binding.lockWatch,
    wait: api.wait,
    waitAsync: api.waitAsync,
    notify(...args) {
      step();
      return api.notify(...args);
    },
    releaseLock(...args) {
      step();
      return binding.releaseLock(...args);
    },
  });

  /** Runs `call` with every lock step from `from` on throwing; whether it threw. */
  function failingFrom(from, call) {
    const saved = { compareExchange: Atomics.compareExchange, exchange: Atomics.exchange, store: Atomics.store };
    Object.assign(outOfStack, { from, steps: 0 });
    for (const name of Object.keys(saved)) {
      Atomics[name] = function (...args) {
        step();
        return saved[name].apply(Atomics, args);
      };
    }
    try {
      call();
      return false;
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      return true;
    } finally {
      Object.assign(Atomics, saved);
      outOfStack.from = Infinity;
    }
  }

  for (const kind of ['unlock', 'release', 'forceUnlock']) {
    it(`${kind}(): wherever the failures start, a throw leaves the lock held with its waiter queued; a return woke it`, async () => {
      for (let from = 0; from < 50; from++) {
        const lock = new Lock();
        const holder = new Lock(lock.sab);
        const release = holder.lockGuard();
        const waiter = lock.acquire();
        assert.strictEqual(queued(lock), 1);
        const call = kind === 'unlock' ? () => holder.unlock() : kind === 'release' ? release : () => holder.forceUnlock();
        const threw = failingFrom(from, call);
        if (threw) {
          assert.deepStrictEqual([from, heldWord(lock), queued(lock)], [from, contendedHere(), 1], 'threw with the lock not held');
          call(); // the retry, from lower down
        }
        assert.deepStrictEqual([from, queued(lock)], [from, 0], 'the waiter was not woken');
        (await waiter)();
        assert.strictEqual(lock.isLocked(), false);
        if (!threw) return; // every step fit
      }
      assert.fail('the release never fit');
    });
  }
});
