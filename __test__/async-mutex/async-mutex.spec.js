'use strict';
// atomics-waitasync/async-mutex: async-mutex 0.5's API and semantics in a
// thread (runExclusive after acquire, a release of an unheld Mutex ignored,
// a signalling Semaphore, priorities, cancel, withTimeout, tryAcquire), and
// across threads: an instance posted to workers is the same lock there,
// exclusive, with counts exact, and robust when a holder's thread dies.

const assert = require('assert');
const path = require('path');
const { Worker } = require('worker_threads');
const am = require('../../async-mutex');
const { root, runNodeAsync, withMessages, nearTheLimit, droppedHoldsGrowth } = require('../helpers');
const { waitersForTesting } = require('../..');

const { Mutex, Semaphore, withTimeout, tryAcquire, E_TIMEOUT, E_ALREADY_LOCKED, E_CANCELED } = am;
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A worker running `body(am, workerData, parentPort)` (a function's source) with the entry loaded. */
function entryWorker(body, workerData) {
  const worker = new Worker(
    `const { parentPort, workerData } = require('worker_threads');
     const am = require(${JSON.stringify(path.join(root, 'async-mutex'))});
     (${body})(am, workerData, parentPort);`,
    { eval: true, workerData }
  );
  return withMessages(worker);
}

describe('atomics-waitasync/async-mutex', function () {
  this.timeout(60000);

  afterEach(async () => {
    // Nothing of a test left waiting in this thread (it would keep it alive).
    const probe = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < 1000 && waitersForTesting(probe, 0).pending !== 0; i++) await turn();
    assert.strictEqual(waitersForTesting(probe, 0).pending, 0, 'no waitAsync left pending in this thread');
  });

  it('exports async-mutex 0.5\'s names, from require and import alike', async () => {
    assert.deepStrictEqual(Object.keys(am).sort(), ['E_ALREADY_LOCKED', 'E_CANCELED', 'E_TIMEOUT', 'Mutex', 'Semaphore', 'tryAcquire', 'withTimeout']);
    assert.strictEqual(E_TIMEOUT.message, 'timeout while waiting for mutex to become available');
    assert.strictEqual(E_ALREADY_LOCKED.message, 'mutex already locked');
    assert.strictEqual(E_CANCELED.message, 'request for lock canceled');
    const esm = await import('atomics-waitasync/async-mutex');
    assert.strictEqual(esm.Mutex, Mutex);
    assert.strictEqual(esm.E_CANCELED, E_CANCELED);
  });

  it('Mutex: runExclusive runs its callback after acquire resolved, also when the lock is free', async () => {
    const mutex = new Mutex();
    let ran = false;
    const done = mutex.runExclusive(() => {
      ran = true;
      return 'result';
    });
    assert.strictEqual(ran, false, 'not before runExclusive returns');
    assert.strictEqual(mutex.isLocked(), true, 'taken at the call');
    assert.strictEqual(await done, 'result');
    assert.strictEqual(mutex.isLocked(), false);
  });

  it('Mutex: release() of a mutex this instance does not hold does nothing; of one it holds, hands it to the first waiting take', async () => {
    const mutex = new Mutex();
    mutex.release();
    const other = Mutex.from(mutex);
    const release = await other.acquire();
    mutex.release(); // held through another instance: left alone
    assert.strictEqual(mutex.isLocked(), true);
    release();
    await mutex.acquire();
    const next = mutex.acquire();
    mutex.release();
    assert.strictEqual(mutex.isLocked(), true, 'handed on');
    (await next)();
    assert.strictEqual(mutex.isLocked(), false);
  });

  it('Mutex: priorities, then first come, first served; cancel() rejects every waiting take with the cancel error', async () => {
    const mutex = new Mutex();
    const release = await mutex.acquire();
    const order = [];
    const takes = [0, 2, 0, 1].map((priority, n) => mutex.runExclusive(() => order.push(n), priority));
    release();
    await Promise.all(takes);
    assert.deepStrictEqual(order, [1, 3, 0, 2]);
    const custom = new Error('custom');
    const cancelable = new Mutex(custom);
    const held = await cancelable.acquire();
    const waiting = [cancelable.acquire(), cancelable.runExclusive(() => assert.fail('ran'))];
    cancelable.cancel();
    for (const take of waiting) await assert.rejects(take, (e) => e === custom);
    held();
    assert.strictEqual(cancelable.isLocked(), false, 'a canceled take never takes it');
  });

  it('Semaphore: a signalling count: release adds permits never taken, the value may start below 0, acquire resolves [value, release]', async () => {
    const semaphore = new Semaphore(-1);
    assert.strictEqual(semaphore.isLocked(), true);
    const got = semaphore.acquire();
    semaphore.release(2); // -1 + 2 = 1: enough for the waiting take
    const [value, release] = await got;
    assert.strictEqual(value, 1);
    assert.strictEqual(semaphore.getValue(), 0);
    release();
    release(); // idempotent
    assert.strictEqual(semaphore.getValue(), 1);
    semaphore.setValue(5);
    assert.strictEqual(await semaphore.runExclusive((v) => v, 2), 5);
  });

  it('Semaphore: a heavy take holds lighter ones behind it off ("heavy items run eventually"); a light one of a higher priority passes', async () => {
    const semaphore = new Semaphore(2);
    const [, release] = await semaphore.acquire(2);
    const order = [];
    const heavy = semaphore.runExclusive(() => order.push('heavy'), 2);
    const light = semaphore.runExclusive(() => order.push('light'), 1);
    semaphore.release(1); // one free: the heavy first waits, so does the light one behind it
    await turn();
    assert.deepStrictEqual(order, []);
    const urgent = semaphore.runExclusive(() => order.push('urgent'), 1, 1);
    await urgent;
    release();
    await Promise.all([heavy, light]);
    assert.deepStrictEqual(order, ['urgent', 'heavy', 'light']);
  });

  it('withTimeout and tryAcquire reject with their errors, and give back a take that came too late', async () => {
    const mutex = new Mutex();
    const release = await mutex.acquire();
    await assert.rejects(tryAcquire(mutex).acquire(), (e) => e === E_ALREADY_LOCKED);
    await assert.rejects(withTimeout(mutex, 10).acquire(), (e) => e === E_TIMEOUT);
    const mine = new Error('mine');
    const empty = new Semaphore(0);
    await assert.rejects(withTimeout(empty, 10, mine).runExclusive(() => 1), (e) => e === mine);
    // Its take still waits (as async-mutex's would), keeping this thread alive: canceled, it is gone.
    assert.strictEqual(waitersForTesting(empty.i32a, 0).registry, 1);
    empty.cancel();
    while (waitersForTesting(empty.i32a, 0).registry !== 0) await turn();
    release();
    while (mutex.isLocked()) await turn(); // the late takes took it and gave it back
    assert.strictEqual(await tryAcquire(mutex).runExclusive(() => 'free'), 'free');
  });

  it('bad arguments throw errors of the right type naming the argument', async () => {
    const semaphore = new Semaphore(1);
    assert.throws(() => semaphore.acquire(0), { name: 'RangeError', message: /"weight"/ });
    assert.throws(() => semaphore.acquire(1.5), { name: 'RangeError', message: /"weight"/ });
    assert.throws(() => semaphore.release(-1), { name: 'RangeError', message: /"weight"/ });
    assert.throws(() => semaphore.waitForUnlock('1'), { name: 'TypeError', message: /"weight"/ });
    assert.throws(() => semaphore.acquire(1, NaN), { name: 'RangeError', message: /"priority"/ });
    assert.throws(() => new Semaphore(2 ** 31), { name: 'RangeError', message: /"value"/ });
    assert.throws(() => new Semaphore('1'), { name: 'TypeError', message: /"value"/ });
    assert.throws(() => semaphore.setValue(undefined), { name: 'TypeError', message: /"value"/ });
    assert.throws(() => new Semaphore(kMax()).release(1), { name: 'RangeError' });
    await assert.rejects(new Mutex().runExclusive(42), { name: 'TypeError', message: /"callback"/ });
    assert.throws(() => Mutex.prototype.acquire.call({}), { name: 'TypeError', message: /Mutex/ });
    assert.throws(() => Semaphore.from(42), { name: 'TypeError' });
  });

  it('across threads: workers and the main thread share a Mutex and a Semaphore through from(); exclusive, counts exact', async () => {
    const mutex = new Mutex();
    const semaphore = new Semaphore(2);
    // data[0]: the count under the mutex; data[1]: holders of the semaphore now; data[2]: the most at once.
    const data = new Int32Array(new SharedArrayBuffer(12));
    const body = `async (am, { mutex, semaphore, data, rounds }, port) => {
      const m = am.Mutex.from(mutex);
      const s = am.Semaphore.from(semaphore);
      const d = new Int32Array(data);
      for (let i = 0; i < rounds; i++) {
        await m.runExclusive(async () => {
          const before = d[0];
          await null;
          d[0] = before + 1;
        });
        await s.runExclusive(async () => {
          const now = Atomics.add(d, 1, 1) + 1;
          let most = Atomics.load(d, 2);
          while (now > most) most = Atomics.compareExchange(d, 2, most, now) === most ? now : Atomics.load(d, 2);
          await null;
          Atomics.sub(d, 1, 1);
        });
      }
      port.postMessage('done');
    }`;
    const rounds = 300;
    const workers = [0, 1, 2].map(() => entryWorker(body, { mutex, semaphore, data: data.buffer, rounds }));
    for (let i = 0; i < rounds; i++) {
      await mutex.runExclusive(async () => {
        const before = data[0];
        await turn();
        data[0] = before + 1;
      });
    }
    for (const w of workers) assert.strictEqual(await w.next(), 'done');
    await Promise.all(workers.map((w) => w.done()));
    assert.strictEqual(data[0], 4 * rounds, 'every increment under the mutex kept');
    assert.ok(data[2] <= 2, `at most 2 held the semaphore at once (${data[2]})`);
    assert.strictEqual(semaphore.getValue(), 2);
    assert.strictEqual(mutex.isLocked(), false);
  });

  it('across threads: a signal released by a worker that never took it wakes the main thread\'s waiting take', async () => {
    const items = new Semaphore(0);
    const w = entryWorker(`(am, { items }, port) => {
      const s = am.Semaphore.from(items);
      for (let i = 0; i < 100; i++) s.release();
      port.postMessage('produced');
    }`, { items });
    let consumed = 0;
    while (consumed < 100) {
      const [, release] = await items.acquire();
      void release; // consumed: not given back
      consumed++;
    }
    assert.strictEqual(await w.next(), 'produced');
    await w.done();
    assert.strictEqual(items.getValue(), 0);
  });

  for (const how of ['terminate', 'exit']) {
    it(`robust: a worker that ends by ${how} holding the Mutex and permits gives them back; the signals it released stay`, async () => {
      const mutex = new Mutex();
      const semaphore = new Semaphore(3);
      const w = entryWorker(`async (am, { mutex, semaphore, how }, port) => {
        const m = am.Mutex.from(mutex);
        const s = am.Semaphore.from(semaphore);
        await m.acquire();
        await s.acquire(2);
        s.release(1); // gives back one of the two it holds
        am.Semaphore.from(semaphore).release(4); // an instance that holds nothing: 4 more, a signal
        port.once('message', () => process.exit(0));
        setInterval(() => {}, 1000); // (alive, holding, until it ends)
        port.postMessage('holding');
      }`, { mutex, semaphore, how });
      assert.strictEqual(await w.next(), 'holding');
      const taken = mutex.acquire();
      assert.strictEqual(semaphore.getValue(), 3 - 2 + 1 + 4);
      if (how === 'terminate') await w.terminate();
      else w.postMessage('exit');
      await w.done();
      const release = await taken;
      assert.strictEqual(release.abandoned, true, 'the next holder is told');
      release();
      assert.strictEqual(semaphore.getValue(), 3 + 4, 'the permit it held came back; the 4 it added stay');
    });
  }
});

function kMax() {
  return 2 ** 31 - 1;
}

describe('atomics-waitasync/async-mutex, what a review found', function () {
  this.timeout(60000);

  it('a worker that ends holding permits after setValue(2 ** 31 - 1) leaves the value at the most, not wrapped below 0', async () => {
    const semaphore = new Semaphore(1);
    const w = entryWorker(`async (am, { semaphore }, port) => {
      await am.Semaphore.from(semaphore).acquire();
      setInterval(() => {}, 1000); // (alive, holding, until it ends)
      port.postMessage('holding');
    }`, { semaphore });
    assert.strictEqual(await w.next(), 'holding');
    semaphore.setValue(kMax());
    await w.terminate();
    await w.done();
    assert.strictEqual(semaphore.getValue(), kMax());
    const [value, release] = await semaphore.acquire();
    assert.strictEqual(value, kMax());
    release();
  });

  it('a take that found no permits gets the one a worker gives as it joins the line: none is left parked holding it', async () => {
    // In a child: a take left parked keeps nothing alive, so the child ends without its line.
    const script = `
      const { Worker } = require('worker_threads');
      const { Semaphore } = require('./async-mutex');
      const items = new Semaphore(0);
      const rounds = 20000;
      new Worker(\`
        const { workerData } = require('worker_threads');
        const s = require('./async-mutex').Semaphore.from(workerData.items);
        for (let i = 0; i < \${rounds}; i++) {
          while (Atomics.load(s.i32a, s.index) > 0); // (gives one once the last is taken)
          s.release();
        }\`, { eval: true, workerData: { items } });
      (async () => {
        let taken = 0;
        while (taken < rounds) {
          await items.acquire();
          taken++;
        }
        console.log('took', taken, 'left', items.getValue());
      })();`;
    const result = await runNodeAsync(['-e', script], { timeout: 50000, killAfter: 55000 }); // (a bound, not a timing: 2-5 s here, more under load)
    assert.strictEqual(result.stdout.trim(), 'took 20000 left 0', result.stderr);
    assert.strictEqual(result.status, 0);
  });

  /** The entry's Semaphore over a waitAsync that throws `error` the first `failures` times. */
  function semaphoreWithFailingWaits(failures, error) {
    const api = require('../..');
    const binding = require('../../binding');
    const { createAsyncMutex } = require('../../lib/async-mutex');
    const waitAsync = (...args) => {
      if (failures > 0) {
        failures--;
        throw error;
      }
      return api.waitAsync(...args);
    };
    return createAsyncMutex({ waitAsync, notify: api.notify, AsyncLock: api.AsyncLock, stakeWatch: binding.stakeWatch }).Semaphore;
  }

  it('a wait on the value that fails once is made again: the take waiting then gets what another thread gives', async () => {
    const FaultySemaphore = semaphoreWithFailingWaits(1, new RangeError('Maximum call stack size exceeded'));
    const items = new FaultySemaphore(0);
    const take = items.acquire();
    for (let i = 0; i < 1000 && waitersForTesting(items.i32a, items.index).registry === 0; i++) await turn();
    assert.strictEqual(waitersForTesting(items.i32a, items.index).registry, 1, 'waits on the value again');
    Semaphore.from(items).release(); // (as another thread would)
    const [value, release] = await take;
    assert.strictEqual(value, 1);
    release();
    assert.strictEqual(items.getValue(), 1);
  });

  it('a wait on the value that keeps failing rejects the takes and waitForUnlock() calls waiting, with its error', async () => {
    const error = new Error('the wait failed');
    const FaultySemaphore = semaphoreWithFailingWaits(2, error);
    const items = new FaultySemaphore(0);
    await assert.rejects(items.acquire(), error);
    assert.strictEqual(items.getValue(), 0);
    const FaultyAgain = semaphoreWithFailingWaits(2, error);
    const more = new FaultyAgain(0);
    await assert.rejects(more.waitForUnlock(), error);
    // The next call waits afresh, and gets what comes.
    const take = items.acquire();
    Semaphore.from(items).release(); // (as another thread would: the pump, not the instance, grants it)
    assert.strictEqual((await take)[0], 1);
  });

  /** The tally of fixtures/release-near-stack-limit.js's `name` case. */
  const releaseNearTheLimit = (name) => nearTheLimit('release-near-stack-limit.js', name);

  it('near the stack limit, a release function that threw gives the permit back once when called again', async () => {
    const outs = await releaseNearTheLimit('entry-releaser');
    const tail = '; the other take served; value 1';
    assert.deepStrictEqual(Object.keys(outs).sort(), [`RangeError${tail}`, `ok${tail}`], JSON.stringify(outs));
  });

  it('near the stack limit, setValue() that threw has still woken, by the instance\'s next call, the take it lets go', async () => {
    const outs = await releaseNearTheLimit('entry-setvalue');
    const tail = '; the other take served; value 1';
    assert.deepStrictEqual(Object.keys(outs).sort(), [`RangeError having changed nothing${tail}`, `RangeError${tail}`, `ok${tail}`], JSON.stringify(outs));
  });

  it('near the stack limit, acquire() takes, or throws or rejects having kept nothing', async () => {
    const outs = await releaseNearTheLimit('entry-acquire');
    for (const out of Object.keys(outs)) assert.match(out, /^(took|threw RangeError|rejected RangeError); value 1$/, JSON.stringify(outs));
    assert.ok(outs['took; value 1'] > 0 && outs['threw RangeError; value 1'] > 0, JSON.stringify(outs));
  });

  it('Semaphores dropped while their release functions live, then released, leave nothing behind', async () => {
    const grown = await droppedHoldsGrowth('entry');
    assert.ok(grown < 24000, `ArrayBuffer memory grew by ${grown} bytes over 10,000 instances`);
  });

  it('cancel() lets go the waitForUnlock() calls that only the canceled takes held back', async () => {
    const semaphore = new Semaphore(2);
    const heavy = semaphore.acquire(3);
    let unlocked = false;
    const waiting = semaphore.waitForUnlock(1).then(() => (unlocked = true));
    await turn();
    assert.strictEqual(unlocked, false, 'behind the heavy take');
    semaphore.cancel();
    await assert.rejects(heavy, E_CANCELED);
    await waiting;
    assert.strictEqual(semaphore.getValue(), 2, 'nothing changed the value');
  });

  it('a release function that threw past 2 ** 31 - 1 has given nothing back, and gives them back when called again', async () => {
    const semaphore = new Semaphore(1);
    const [, release] = await semaphore.acquire();
    semaphore.setValue(kMax());
    assert.throws(release, { name: 'RangeError' });
    assert.strictEqual(semaphore.getValue(), kMax());
    semaphore.setValue(0);
    release();
    release(); // (once given back, it does nothing)
    assert.strictEqual(semaphore.getValue(), 1);
  });

  it('a waitForUnlock held back only by a take of higher priority does not spin the thread', async () => {
    // In a child: a spinning thread would never let its timer run, nor this test's.
    const script = `
      const { Semaphore } = require('./async-mutex');
      const semaphore = new Semaphore(0);
      const heavy = semaphore.acquire(2);
      const free = semaphore.waitForUnlock(1);
      semaphore.release(1); // covers the waitForUnlock's weight, not its turn
      setImmediate(async () => { // runs only if the loop turns
        semaphore.release(1);
        (await heavy)[1]();
        await free;
        console.log('turned');
      });`;
    const result = await runNodeAsync(['-e', script], { timeout: 50000, killAfter: 55000 }); // (a bound, not a timing: 2-5 s here, more under load)
    assert.strictEqual(result.stdout.trim(), 'turned', result.stderr);
    assert.strictEqual(result.status, 0);
  });
});
