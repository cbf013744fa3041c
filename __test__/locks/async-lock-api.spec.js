'use strict';
// AsyncLock in one thread: the post's API and statics, the state word,
// construction and argument errors, holder checks, executeLocked's results
// and errors, acquire/release, guards and Symbol.dispose, waitForUnlock.

const assert = require('assert');
const { AsyncLock, waitersForTesting } = require('../..');

const newSab = () => new SharedArrayBuffer(16);

describe('AsyncLock API', function () {
  it('has the post\'s statics, plus CONTENDED and ABANDONED', () => {
    assert.strictEqual(AsyncLock.INDEX, 0);
    assert.strictEqual(AsyncLock.UNLOCKED, 0);
    assert.strictEqual(AsyncLock.LOCKED, 1);
    assert.strictEqual(AsyncLock.CONTENDED, 2);
    assert.strictEqual(AsyncLock.ABANDONED, 1);
  });

  it('runs the post\'s code: new AsyncLock(sab), lock(), unlock() on i32a[INDEX]', () => {
    const sab = newSab();
    const lock = new AsyncLock(sab);
    assert.strictEqual(lock.sab, sab);
    assert.ok(lock.i32a instanceof Int32Array);
    assert.strictEqual(lock.i32a.buffer, sab);
    lock.lock();
    // The word names this thread (its owner id << 1), without WAITERS.
    const word = new Int32Array(sab)[AsyncLock.INDEX];
    assert.ok(word > 1 && (word & 1) === 0, `uncontended: an owner without WAITERS, not ${word}`);
    assert.strictEqual(lock.isLocked(), true);
    assert.strictEqual(lock.holder(), require('worker_threads').threadId);
    lock.unlock();
    assert.strictEqual(new Int32Array(sab)[AsyncLock.INDEX], AsyncLock.UNLOCKED);
    assert.strictEqual(lock.isLocked(), false);
  });

  it('puts many locks in one buffer: (int32Array, index) and (sab, index), byte offsets included', () => {
    const sab = newSab();
    const all = new Int32Array(sab);
    const a = new AsyncLock(all, 1);
    const b = new AsyncLock(sab, 2);
    const c = new AsyncLock(new Int32Array(sab, 8, 2), 1); // the word at byte 12
    assert.ok(a.tryLock() && b.tryLock() && c.tryLock(), 'independent locks');
    const held = all[1]; // this thread's owner word
    assert.ok(held > 1);
    assert.deepStrictEqual(Array.from(all), [0, held, held, held]);
    assert.strictEqual(c.sab, sab);
    a.unlock();
    b.unlock();
    c.unlock();
    assert.deepStrictEqual(Array.from(all), [0, 0, 0, 0]);
  });

  it('new AsyncLock() makes its own 4-byte SharedArrayBuffer; from() rebuilds a lock on the same slot', () => {
    const lock = new AsyncLock();
    assert.ok(lock.sab instanceof SharedArrayBuffer);
    assert.strictEqual(lock.sab.byteLength, 4);
    const other = new AsyncLock(new Int32Array(newSab(), 4), 2);
    // What postMessage delivers: a plain copy of the own enumerable fields.
    const copy = { sab: other.sab, i32a: other.i32a, index: other.index };
    assert.deepStrictEqual(Object.keys(other).sort(), ['i32a', 'index', 'sab']);
    const rebuilt = AsyncLock.from(copy);
    assert.ok(rebuilt instanceof AsyncLock);
    assert.ok(other.tryLock());
    assert.strictEqual(rebuilt.isLocked(), true, 'same word');
    assert.strictEqual(rebuilt.tryLock(), false);
    assert.throws(() => rebuilt.unlock(), { code: 'ERR_ASYNC_LOCK_NOT_HELD' }, 'a rebuilt lock does not hold it');
    other.unlock();
    assert.strictEqual(AsyncLock.from({ sab: other.sab, index: 3 }).i32a.length, 4);
  });

  it('rejects bad constructor arguments with TypeError/RangeError naming them', () => {
    assert.throws(() => new AsyncLock(new ArrayBuffer(4)), { name: 'TypeError', message: /"sab"/ });
    assert.throws(() => new AsyncLock(new Int32Array(4)), { name: 'TypeError', message: /"sab"/ });
    assert.throws(() => new AsyncLock(new Float64Array(newSab())), { name: 'TypeError', message: /"sab"/ });
    assert.throws(() => new AsyncLock(null), { name: 'TypeError', message: /"sab"/ });
    assert.throws(() => new AsyncLock(new SharedArrayBuffer(2)), { name: 'RangeError', message: /"sab"/ });
    assert.throws(() => new AsyncLock(newSab(), 4), { name: 'RangeError', message: /"index"/ });
    assert.throws(() => new AsyncLock(newSab(), -1), { name: 'RangeError', message: /"index"/ });
    assert.throws(() => new AsyncLock(newSab(), 1.5), { name: 'RangeError', message: /"index"/ });
    assert.throws(() => new AsyncLock(newSab(), '1'), { name: 'TypeError', message: /"index"/ });
    assert.throws(() => AsyncLock.from(undefined), { name: 'TypeError', message: /"value"/ });
    assert.throws(() => AsyncLock.from({ index: 0 }), { name: 'TypeError', message: /"value"/ });
    assert.throws(() => AsyncLock.from({ i32a: new Int32Array(4), index: 0 }), { name: 'TypeError', message: /"sab"/ });
  });

  it('unlock() by a non-holder throws the post\'s error; the holder is the instance (this thread)', () => {
    const sab = newSab();
    const lock = new AsyncLock(sab);
    const same = new AsyncLock(sab);
    assert.throws(() => lock.unlock(), {
      name: 'Error',
      message: 'Tried to unlock while not holding the mutex',
      code: 'ERR_ASYNC_LOCK_NOT_HELD',
    });
    lock.lock();
    assert.throws(() => same.unlock(), { code: 'ERR_ASYNC_LOCK_NOT_HELD' });
    assert.strictEqual(lock.isLocked(), true, 'a failed unlock leaves the lock held');
    lock.unlock();
    assert.throws(() => lock.unlock(), { code: 'ERR_ASYNC_LOCK_NOT_HELD' }, 'twice');
  });

  it('lock() while this instance holds it throws instead of deadlocking', () => {
    const lock = new AsyncLock();
    lock.lock();
    assert.throws(() => lock.lock(), { code: 'ERR_ASYNC_LOCK_DEADLOCK' });
    assert.throws(() => lock.lock(10), { code: 'ERR_ASYNC_LOCK_DEADLOCK' });
    lock.unlock();
  });

  it('tryLock() and lock(timeout) return whether they took it', () => {
    const sab = newSab();
    const a = new AsyncLock(sab);
    const b = new AsyncLock(sab);
    assert.strictEqual(a.tryLock(), true);
    assert.strictEqual(a.tryLock(), false, 'not reentrant');
    assert.strictEqual(b.tryLock(), false);
    assert.strictEqual(b.lock(0), false);
    assert.strictEqual(b.lock(5), false, 'blocks (main thread may) and gives up');
    assert.strictEqual(waitersForTesting(a.i32a, 0).registry, 0, 'the timed-out wait left nothing queued');
    a.unlock();
    assert.strictEqual(b.lock(5), true);
    b.unlock();
    assert.strictEqual(b.lock(), true);
    b.unlock();
  });

  it('lock(timeout) validates the timeout', () => {
    const lock = new AsyncLock();
    assert.throws(() => lock.lock('5'), { name: 'TypeError', message: /"timeout"/ });
    assert.throws(() => lock.lock(-1), { name: 'RangeError', message: /"timeout"/ });
    assert.throws(() => lock.lock(NaN), { name: 'RangeError', message: /"timeout"/ });
    assert.strictEqual(lock.isLocked(), false);
  });

  it('executeLocked(f) resolves with f\'s result, runs f at once when free, and releases', async () => {
    const lock = new AsyncLock();
    let ran = false;
    const p = lock.executeLocked(() => {
      ran = true;
      assert.strictEqual(lock.isLocked(), true, 'held while f runs');
      return 42;
    });
    assert.strictEqual(ran, true, 'ran before executeLocked returned, as in the post');
    assert.ok(p instanceof Promise);
    assert.strictEqual(await p, 42);
    assert.strictEqual(lock.isLocked(), false);
    let ranWithOptions = false;
    const q = lock.executeLocked(() => {
      ranWithOptions = true;
    }, { timeout: 5 });
    assert.strictEqual(ranWithOptions, true, 'with options too');
    await q;
    assert.strictEqual(await lock.runExclusive(async () => 'async'), 'async');
    assert.strictEqual(lock.isLocked(), false);
  });

  it('executeLocked(f) releases when f throws or rejects, then rejects with f\'s error', async () => {
    const lock = new AsyncLock();
    const sync = new Error('sync');
    const async = new Error('async');
    await assert.rejects(lock.executeLocked(() => {
      throw sync;
    }), (e) => e === sync);
    assert.strictEqual(lock.isLocked(), false);
    await assert.rejects(lock.executeLocked(async () => {
      await null;
      throw async;
    }), (e) => e === async);
    assert.strictEqual(lock.isLocked(), false);
    // A thenable that rejects counts as well.
    await assert.rejects(lock.executeLocked(() => ({ then: (_, reject) => reject(sync) })), (e) => e === sync);
    assert.strictEqual(lock.isLocked(), false);
  });

  it('queues callers of one thread in order while f holds the lock across awaits', async () => {
    const lock = new AsyncLock();
    const log = [];
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    const first = lock.executeLocked(async () => {
      log.push('first start');
      await gate;
      log.push('first end');
    });
    const second = lock.executeLocked(() => log.push('second'));
    const third = lock.acquire().then((releaseIt) => {
      log.push('third');
      releaseIt();
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepStrictEqual(log, ['first start'], 'the others wait');
    assert.strictEqual(lock.i32a[0] & 1, 0, "they wait in the instance's line, not on the word");
    release();
    await Promise.all([first, second, third]);
    assert.deepStrictEqual(log, ['first start', 'first end', 'second', 'third'], 'in the order they asked');
    assert.strictEqual(lock.isLocked(), false);
    const counts = waitersForTesting(lock.i32a, 0);
    assert.strictEqual(counts.registry, 0);
  });

  it('rejects bad arguments of the async methods (never throws)', async () => {
    const lock = new AsyncLock();
    await assert.rejects(lock.executeLocked('f'), { name: 'TypeError', message: /"f"/ });
    await assert.rejects(lock.executeLocked(() => 1, 5), { name: 'TypeError', message: /"options"/ });
    await assert.rejects(lock.acquire({ timeout: -5 }), { name: 'RangeError', message: /"options.timeout"/ });
    await assert.rejects(lock.acquire({ timeout: '5' }), { name: 'TypeError', message: /"options.timeout"/ });
    await assert.rejects(lock.acquire({ signal: {} }), { name: 'TypeError', message: /"options.signal"/ });
    const noRemove = { aborted: false, addEventListener() {} };
    await assert.rejects(lock.acquire({ signal: noRemove }), { name: 'TypeError', message: /"options.signal"/ });
    await assert.rejects(lock.waitForUnlock(null), { name: 'TypeError', message: /"options"/ });
    assert.strictEqual(lock.isLocked(), false);
  });

  it('acquire() resolves with an idempotent release function', async () => {
    const lock = new AsyncLock();
    const release = await lock.acquire();
    assert.strictEqual(typeof release, 'function');
    assert.strictEqual(lock.isLocked(), true);
    release();
    assert.strictEqual(lock.isLocked(), false);
    const other = await lock.acquire();
    release(); // a second call of the first release must not free the new holder
    assert.strictEqual(lock.isLocked(), true);
    other();
    assert.strictEqual(lock.isLocked(), false);
    lock.lock();
    lock.release(); // async-mutex's name for unlock()
    assert.strictEqual(lock.isLocked(), false);
  });

  it('release functions are disposable where the runtime has Symbol.dispose/asyncDispose', async function () {
    if (typeof Symbol.dispose !== 'symbol') this.skip();
    const lock = new AsyncLock();
    const guard = lock.lockGuard();
    assert.strictEqual(lock.isLocked(), true);
    guard[Symbol.dispose]();
    assert.strictEqual(lock.isLocked(), false);
    const release = await lock.acquire();
    await release[Symbol.asyncDispose]();
    assert.strictEqual(lock.isLocked(), false);
    assert.throws(() => {
      const held = new AsyncLock(lock.sab);
      held.lock();
      lock.lockGuard(0);
    }, { code: 'ERR_ASYNC_LOCK_TIMEOUT' });
  });

  it('`using guard = lock.lockGuard()` releases at the end of the block where the syntax exists', function () {
    let block;
    try {
      // eslint-disable-next-line no-new-func
      block = new Function('lock', '{ using guard = lock.lockGuard(); if (!lock.isLocked()) throw new Error("not held"); }');
    } catch (_) {
      this.skip(); // no `using` in this runtime
    }
    const lock = new AsyncLock();
    block(lock);
    assert.strictEqual(lock.isLocked(), false);
  });

  it('waitForUnlock() resolves once the lock is free, without taking it', async () => {
    const lock = new AsyncLock();
    await lock.waitForUnlock(); // free: at once
    const release = await lock.acquire();
    let seen = false;
    const waiting = lock.waitForUnlock().then(() => {
      seen = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.strictEqual(seen, false);
    release();
    await waiting;
    assert.strictEqual(lock.isLocked(), false, 'it did not take the lock');
    assert.strictEqual(waitersForTesting(lock.i32a, 0).registry, 0);
  });

  it('forceUnlock() frees a lock whoever holds it and says whether it was locked', () => {
    const sab = newSab();
    const holder = new AsyncLock(sab);
    const rescuer = new AsyncLock(sab);
    assert.strictEqual(rescuer.forceUnlock(), false);
    holder.lock();
    assert.strictEqual(rescuer.forceUnlock(), true);
    assert.strictEqual(holder.isLocked(), false);
    assert.throws(() => holder.unlock(), { code: 'ERR_ASYNC_LOCK_NOT_HELD' }, 'the old holder learns it lost the lock');
    assert.strictEqual(rescuer.tryLock(), true);
    rescuer.unlock();
  });

  it('every method called on null, undefined, a Proxy, a copy or an object inheriting from a lock throws (or rejects) a TypeError and leaves the word alone; a subclass works', async () => {
    const lock = new AsyncLock();
    const impostors = {
      'a Proxy': new Proxy(lock, {}),
      'a posted copy': { sab: lock.sab, i32a: lock.i32a, index: lock.index },
      'an object inheriting from it': Object.create(lock),
      null: null,
      undefined: undefined,
    };
    const sync = ['lock', 'tryLock', 'unlock', 'release', 'lockGuard', 'forceUnlock'];
    const async = ['executeLocked', 'runExclusive', 'acquire', 'waitForUnlock'];
    const badThis = { name: 'TypeError', message: /"this" value must be an AsyncLock/ };
    for (const held of [false, true]) {
      if (held) lock.lock();
      const word = Atomics.load(lock.i32a, 0);
      for (const [what, impostor] of Object.entries(impostors)) {
        for (const method of sync) {
          assert.throws(() => AsyncLock.prototype[method].call(impostor, 0), badThis, `${method} on ${what}`);
        }
        for (const method of async) {
          let ran = false;
          const f = method === 'executeLocked' || method === 'runExclusive' ? () => (ran = true) : undefined;
          const outcome = AsyncLock.prototype[method].call(impostor, f);
          await assert.rejects(outcome, badThis, `${method} on ${what}`);
          assert.strictEqual(ran, false, `${method} on ${what} ran f`);
        }
        assert.strictEqual(Atomics.load(lock.i32a, 0), word, `the word after calls on ${what}`);
      }
      if (held) lock.unlock();
    }
    class Sub extends AsyncLock {}
    const sub = new Sub(lock.sab);
    assert.strictEqual(await sub.executeLocked(() => lock.isLocked()), true);
    sub.lock();
    assert.strictEqual(lock.tryLock(), false);
    sub.unlock();
    (await sub.acquire())();
    assert.strictEqual(sub.forceUnlock(), false);
    assert.strictEqual(lock.isLocked(), false);
  });
});
