'use strict';
// One thread's async takes of one instance are served first come, first
// served: a task that releases and asks again waits behind the tasks that
// asked before it (they used to starve), for AsyncLock, Semaphore, RwLock
// and a Condition's re-take; a take that gives up (timeout, abort) leaves
// the line without costing the others their turn; priorities order the
// line; and against workers in tight loops every task still gets its turns.

const assert = require('assert');
const { AsyncLock, Semaphore, RwLock, Condition, waitersForTesting } = require('../..');
const { primitiveWorker } = require('../helpers');
const { makeAbortController } = require('../fixtures/async-lock-helpers');

const turn = () => new Promise((resolve) => setImmediate(resolve));

// Each flavour: a fresh instance, and "run f holding it" through one of its async takes.
const flavours = [
  ['AsyncLock acquire()', () => new AsyncLock(), async (lock, f) => {
    const release = await lock.acquire();
    try {
      await f();
    } finally {
      release();
    }
  }],
  ['AsyncLock executeLocked(f)', () => new AsyncLock(), (lock, f) => lock.executeLocked(f)],
  ['Semaphore(1) runExclusive(f)', () => new Semaphore(1), (semaphore, f) => semaphore.runExclusive(f)],
  ['Semaphore(2) acquire(2)', () => new Semaphore(2), async (semaphore, f) => {
    const release = await semaphore.acquire(2);
    try {
      await f();
    } finally {
      release();
    }
  }],
  ['RwLock runExclusive(f)', () => new RwLock(), (rwlock, f) => rwlock.runExclusive(f)],
  ['RwLock write()', () => new RwLock(), async (rwlock, f) => {
    const release = await rwlock.write();
    try {
      await f();
    } finally {
      release();
    }
  }],
];

/**
 * Three tasks each take `primitive` `rounds` times through `run`, holding
 * it across a turn of the event loop; returns the order in which they held
 * it (task numbers), checking that no two held it at once.
 */
async function threeTasks(primitive, run, rounds) {
  const order = [];
  let inside = 0;
  await Promise.all(
    [0, 1, 2].map(async (task) => {
      for (let i = 0; i < rounds; i++) {
        await run(primitive, async () => {
          assert.strictEqual(inside++, 0, 'two tasks held it at once');
          order.push(task);
          await turn();
          inside--;
        });
      }
    })
  );
  return order;
}

describe('first come, first served among one thread\'s async takes', function () {
  this.timeout(60000);

  for (const [name, make, run] of flavours) {
    it(`${name}: three tasks that release and ask again take turns, none starves`, async () => {
      const primitive = make();
      const order = await threeTasks(primitive, run, 50);
      assert.strictEqual(order.length, 150);
      // Each asked again right after its release, behind the other two: the
      // turns go round, 0 1 2 0 1 2 ...
      assert.deepStrictEqual(order, Array.from({ length: 150 }, (_, i) => i % 3));
    });
  }

  it('RwLock: reads that queued behind a write go together once it is released, in their turn', async () => {
    const rwlock = new RwLock();
    const releaseWrite = await rwlock.write();
    const log = [];
    const readers = [1, 2].map((n) => rwlock.runShared(async () => {
      log.push(`read ${n} in`);
      await turn();
      log.push(`read ${n} out`);
    }));
    const writer = rwlock.runExclusive(() => log.push('write'));
    releaseWrite();
    await Promise.all([...readers, writer]);
    assert.deepStrictEqual(log, ['read 1 in', 'read 2 in', 'read 1 out', 'read 2 out', 'write']);
  });

  it('Semaphore: a heavy request holds lighter ones behind it off until it has run', async () => {
    const semaphore = new Semaphore(3);
    const releaseTwo = await semaphore.acquire(2);
    const log = [];
    const heavy = semaphore.runExclusive(() => log.push('heavy'), 3);
    const light = semaphore.runExclusive(() => log.push('light'), 1); // one permit is free, but it waits its turn
    await turn();
    assert.deepStrictEqual(log, [], 'the light one waits behind the heavy one');
    assert.strictEqual(semaphore.available, 1);
    releaseTwo();
    await Promise.all([heavy, light]);
    assert.deepStrictEqual(log, ['heavy', 'light']);
    assert.strictEqual(semaphore.available, 3);
  });

  it('AsyncLock: a release hands the lock to the first of the line; the word stays held, no take slips in', async () => {
    const lock = new AsyncLock();
    const release = await lock.acquire();
    const next = lock.acquire();
    release();
    assert.strictEqual(lock.isLocked(), true, 'handed on, not freed');
    assert.strictEqual(lock.tryLock(), false);
    let late = false;
    const later = lock.executeLocked(() => (late = true));
    assert.strictEqual(late, false, 'a later executeLocked waits its turn instead of running at once');
    (await next)();
    await later;
    assert.strictEqual(late, true);
    assert.strictEqual(lock.isLocked(), false);
  });

  it("Condition: a woken waiter's re-take gets its turn while another task keeps taking the lock", async () => {
    const lock = new AsyncLock(new SharedArrayBuffer(8), 0);
    const condition = new Condition(lock.sab, 1);
    const log = [];
    const waiter = lock.executeLocked(async () => {
      await condition.waitAsync(lock);
      log.push('waiter again');
    });
    while (waitersForTesting(condition.i32a, 1).registry === 0) await turn();
    let notified = false;
    for (let i = 0; i < 50 && !log.includes('waiter again'); i++) {
      await lock.executeLocked(async () => {
        log.push('other');
        if (!notified) notified = condition.notify() === 1;
        await turn();
      });
    }
    await waiter;
    // It asked again as the notify's turn of the loop ended, so it came
    // next or next but one; before, the looping task kept it out.
    assert.ok(log.indexOf('waiter again') <= 3, log.join(', '));
  });

  for (const [name, make, options, code] of [
    ['AsyncLock', () => new AsyncLock(), undefined, 'ERR_ASYNC_LOCK_TIMEOUT'],
    ['Semaphore', () => new Semaphore(1), 1, 'ERR_SEMAPHORE_TIMEOUT'],
    ['RwLock', () => new RwLock(), undefined, 'ERR_RWLOCK_TIMEOUT'],
  ]) {
    it(`${name}: a take that times out or aborts in the line leaves it, and the others keep their turns`, async () => {
      const primitive = make();
      const takeWith = (opts) => (name === 'Semaphore' ? primitive.acquire(options, opts) : name === 'RwLock' ? primitive.write(opts) : primitive.acquire(opts));
      const release = await takeWith();
      const first = takeWith(); // contends (or is handed the hold)
      const timed = takeWith({ timeout: 20 });
      const controller = makeAbortController();
      const aborted = takeWith({ signal: controller.signal });
      const last = takeWith();
      await assert.rejects(timed, { code });
      const reason = new Error('no thanks');
      controller.abort(reason);
      await assert.rejects(aborted, (e) => e === reason);
      release();
      (await first)();
      (await last)();
      assert.strictEqual(waitersForTesting(primitive.i32a, primitive.index).registry, 0, 'nothing left queued');
      const tryTake = name === 'Semaphore' ? 'tryAcquire' : name === 'RwLock' ? 'tryWrite' : 'tryLock';
      assert.strictEqual(primitive[tryTake](), true, 'free, and nobody left in the line');
    });
  }

  it('priorities: a higher one goes before lower ones already waiting; equal ones in the order they came', async () => {
    const lock = new AsyncLock();
    const release = await lock.acquire();
    const log = [];
    const takes = [
      lock.executeLocked(() => log.push('low'), { priority: -1 }),
      lock.executeLocked(() => log.push('plain 1')),
      lock.executeLocked(() => log.push('high'), { priority: 5 }),
      lock.executeLocked(() => log.push('plain 2')),
    ];
    release();
    await Promise.all(takes);
    assert.deepStrictEqual(log, ['high', 'plain 1', 'plain 2', 'low']);
    await assert.rejects(lock.acquire({ priority: '1' }), { name: 'TypeError', message: /"options\.priority"/ });
    await assert.rejects(lock.acquire({ priority: Infinity }), { name: 'RangeError', message: /"options\.priority"/ });
  });

  for (const [name, make, hold, take] of [
    ['AsyncLock', () => new AsyncLock(), (lock) => AsyncLock.from(lock).acquire(),
      (lock, f, priority) => lock.executeLocked(f, { priority })],
    ['Semaphore', () => new Semaphore(1), (semaphore) => Semaphore.from(semaphore).acquire(),
      (semaphore, f, priority) => semaphore.runExclusive(f, 1, { priority })],
    ['RwLock', () => new RwLock(), (rwlock) => RwLock.from(rwlock).write(),
      (rwlock, f, priority) => rwlock.runExclusive(f, { priority })],
  ]) {
    it(`${name}: takes of higher priorities that join in front of one waiting on the word wait parked behind it, and run in order`, async () => {
      const primitive = make();
      // Another instance over the same memory holds it: the instance's first take waits on the word.
      const release = await hold(primitive);
      const log = [];
      const takes = [0, 1, 2].map((priority) => take(primitive, () => log.push(priority), priority));
      await turn();
      const onTheWord = waitersForTesting(primitive.i32a, primitive.index).registry;
      release();
      await Promise.all(takes);
      assert.strictEqual(onTheWord, 1, 'one take of the instance on the word');
      assert.deepStrictEqual(log, [0, 2, 1], 'the one on the word, then the others by priority');
      assert.strictEqual(waitersForTesting(primitive.i32a, primitive.index).registry, 0);
    });
  }

  for (const [name, make, blocking, take] of [
    ['AsyncLock', () => new AsyncLock(new SharedArrayBuffer(4)), 'lock.lock(); data[0]++; lock.unlock();',
      (lock, f) => lock.executeLocked(f)],
    ['Semaphore', () => new Semaphore(1), 'lock.acquireSync(); data[0]++; lock.release();',
      (semaphore, f) => semaphore.runExclusive(f)],
    ['RwLock', () => new RwLock(), 'lock.writeSync(); data[0]++; lock.releaseWrite();',
      (rwlock, f) => rwlock.runExclusive(f)],
  ]) {
    it(`${name}: three main-thread tasks against two workers in tight loops each get their turns, exclusively`, async () => {
      const primitive = make();
      // data[0]: the count under the lock; data[1]: 1 tells the workers to stop.
      const data = new Int32Array(new SharedArrayBuffer(8));
      const body = `(lock, data, workerData, parentPort) => {
        let mine = 0;
        while (Atomics.load(data, 1) === 0) { ${blocking} mine++; }
        parentPort.postMessage(mine);
      }`;
      const workers = [0, 1].map(() => primitiveWorker([[name, 'lock']], body, { lock: primitive, data: data.buffer }));
      const taken = [0, 0, 0];
      try {
        await Promise.all(
          [0, 1, 2].map(async (task) => {
            while (taken[task] < 30) {
              await take(primitive, async () => {
                const before = data[0];
                await turn();
                data[0] = before + 1; // lost if a worker held it meanwhile
                taken[task]++;
              });
            }
          })
        );
      } finally {
        Atomics.store(data, 1, 1);
      }
      const counts = await Promise.all(workers.map((w) => w.next()));
      await Promise.all(workers.map((w) => w.done()));
      assert.deepStrictEqual(taken, [30, 30, 30]);
      assert.strictEqual(data[0], 90 + counts[0] + counts[1], 'every take held it alone');
    });
  }
});

describe('first come, first served, what a review found', function () {
  this.timeout(60000);

  for (const [name, hold] of [
    ['unlock() does not hand the lock to a parked take: a blocking lock() right after it takes it, and the take runs after',
      (lock) => {
        lock.lock();
        return () => lock.unlock();
      }],
    ["lockGuard()'s release does not hand the lock to a parked take either: a blocking lock() right after it takes it",
      (lock) => lock.lockGuard()],
  ]) {
    it(name, async () => {
      const lock = new AsyncLock();
      const release = hold(lock);
      let inside = false;
      const take = lock.executeLocked(() => {
        assert.strictEqual(inside, false, 'ran while lock() held it');
      });
      release();
      assert.strictEqual(lock.lock(1000), true, 'not ERR_ASYNC_LOCK_DEADLOCK');
      inside = true;
      await turn();
      inside = false;
      lock.unlock();
      await take;
      assert.strictEqual(lock.isLocked(), false);
    });
  }

  it('a take handed the lock whose signal throws as its listener is removed rejects with that error, having released the lock', async () => {
    const lock = new AsyncLock();
    const release = await lock.acquire();
    const failure = new Error('removeEventListener failed');
    const signal = { aborted: false, reason: undefined, addEventListener() {}, removeEventListener() { throw failure; } };
    const take = lock.acquire({ signal });
    release(); // hands the lock to the take
    await assert.rejects(take, failure);
    assert.strictEqual(lock.isLocked(), false);
    assert.strictEqual(AsyncLock.from(lock).tryLock(), true, 'free for another instance');
  });

  it('an abort that comes after a take was woken to contend, before it ran, rejects it', async () => {
    const semaphore = new Semaphore(1);
    const release = await semaphore.acquire();
    const controller = makeAbortController();
    // The first of the line: when it takes, it wakes the next to contend, then runs f,
    // which aborts that next one before it has run.
    const first = semaphore.runExclusive(() => controller.abort(new Error('late')));
    const next = semaphore.acquire(1, { signal: controller.signal });
    release();
    await first;
    await assert.rejects(next, { message: 'late' });
    assert.strictEqual(semaphore.available, 1);
  });
});
