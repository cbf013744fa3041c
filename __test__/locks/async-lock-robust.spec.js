'use strict';
// A thread that ends while it holds an AsyncLock gives it back, however it
// ends, and the next holder, and only it, is told the lock was abandoned,
// through every way of taking it; holder() names the thread that holds it.

const assert = require('assert');
const { Worker, threadId } = require('worker_threads');
const { AsyncLock, waitersForTesting } = require('../..');
const { root, until, runNodeAsync, droppedHoldsGrowth } = require('../helpers');

/**
 * A worker that takes `lock` (lock(), blocking) and posts 'held', then,
 * on the message `how`, ends holding it: 'exit' calls process.exit(),
 * 'throw' throws an uncaught exception, 'end' lets its script end (closes
 * its port; nothing else keeps it alive), 'wait' does nothing (for
 * terminate()). With `unlockFirst`, it unlocks before ending; it also
 * makes an instance of each lock of `alsoMade`, and takes none of them.
 */
function holder(lock, { unlockFirst = false, alsoMade = [] } = {}) {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('worker_threads');
    const { AsyncLock } = require(workerData.root);
    const lock = AsyncLock.from(workerData.lock);
    const others = workerData.alsoMade.map((posted) => AsyncLock.from(posted));
    lock.lock();
    parentPort.postMessage('held');
    parentPort.once('message', (how) => {
      if (workerData.unlockFirst) lock.unlock();
      if (how === 'exit') process.exit(7);
      if (how === 'throw') throw new Error('the holder failed');
      if (how === 'end') parentPort.close();
    });
  `,
    { eval: true, workerData: { root, lock, unlockFirst, alsoMade } }
  );
  worker.on('error', () => {}); // 'throw' ends it with its error
  const held = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('exit', (code) => reject(new Error(`the holder exited (${code}) before it held the lock`)));
  });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  return { worker, held, exited };
}

/** Ends the holder `how` ('terminate' or a message for holder()). */
async function end(h, how) {
  if (how === 'terminate') await h.worker.terminate();
  else h.worker.postMessage(how);
  return h.exited;
}

const queued = (lock, n) =>
  until(() => waitersForTesting(lock.i32a, lock.index).registry === n, `${n} waiter(s) to queue`);

describe('AsyncLock: a thread that ends holding the lock gives it back', function () {
  this.timeout(60000);

  for (const how of ['terminate', 'exit', 'throw', 'end']) {
    it(`a holder that ends by ${how} while the main thread waits: the waiter gets it, told it was abandoned`, async () => {
      const lock = new AsyncLock();
      const h = holder(lock);
      await h.held;
      assert.strictEqual(lock.holder(), h.worker.threadId);
      const got = lock.acquire();
      await queued(lock, 1);
      const code = await end(h, how);
      assert.strictEqual(code, { terminate: 1, exit: 7, throw: 1, end: 0 }[how]);
      const release = await got;
      assert.strictEqual(release.abandoned, true);
      assert.strictEqual(lock.abandoned, true);
      assert.strictEqual(lock.holder(), threadId);
      release();
      assert.strictEqual(lock.abandoned, false);
      assert.strictEqual(lock.isLocked(), false);
      assert.strictEqual(lock.holder(), null);
      // Told once: the next holder inherits a lock that was released.
      const again = await lock.acquire();
      assert.strictEqual(again.abandoned, false);
      again();
    });
  }

  // Each way of taking the lock, on a lock whose holder was terminated with
  // nobody waiting: the lock is free, and the taker is told.
  const takers = {
    tryLock(lock) {
      assert.strictEqual(lock.tryLock(), true);
      const told = lock.abandoned;
      lock.unlock();
      return told;
    },
    lock(lock) {
      assert.strictEqual(lock.lock(), true);
      const told = lock.abandoned;
      lock.unlock();
      return told;
    },
    'lock(timeout)'(lock) {
      assert.strictEqual(lock.lock(1000), true);
      const told = lock.abandoned;
      lock.unlock();
      return told;
    },
    lockGuard(lock) {
      const release = lock.lockGuard();
      const told = [release.abandoned, lock.abandoned];
      release();
      assert.strictEqual(told[0], told[1]);
      return told[0];
    },
    async acquire(lock) {
      const release = await lock.acquire();
      release();
      return release.abandoned;
    },
    executeLocked(lock) {
      return lock.executeLocked(() => lock.abandoned);
    },
    runExclusive(lock) {
      return lock.runExclusive(() => lock.abandoned);
    },
  };
  for (const [name, take] of Object.entries(takers)) {
    it(`${name}() on a lock whose holder was terminated with nobody waiting takes it and is told`, async () => {
      const lock = new AsyncLock();
      const h = holder(lock);
      await h.held;
      await end(h, 'terminate');
      assert.strictEqual(lock.isLocked(), false, 'free once its holder ended');
      assert.strictEqual(lock.holder(), null);
      assert.strictEqual(await take(lock), true);
      assert.strictEqual(await take(lock), false, 'told once');
      assert.strictEqual(lock.isLocked(), false);
    });
  }

  it('waitForUnlock() resolves when the holder ends, and leaves the news for the next taker', async () => {
    const lock = new AsyncLock();
    const h = holder(lock);
    await h.held;
    const free = lock.waitForUnlock();
    await queued(lock, 1);
    await end(h, 'terminate');
    await free;
    assert.strictEqual(lock.tryLock(), true);
    assert.strictEqual(lock.abandoned, true);
    lock.unlock();
  });

  it('with a blocked worker and the main thread queued, the first in line is told and the second is not', async () => {
    const lock = new AsyncLock();
    const h = holder(lock);
    await h.held;
    const waiter = new Worker(
      `
      const { parentPort, workerData } = require('worker_threads');
      const { AsyncLock } = require(workerData.root);
      const lock = AsyncLock.from(workerData.lock);
      parentPort.postMessage('waiting');
      lock.lock();
      const abandoned = lock.abandoned;
      // Holds it until told, so that the main thread's turn comes after.
      parentPort.once('message', () => {
        lock.unlock();
        parentPort.postMessage('released');
      });
      parentPort.postMessage({ abandoned });
    `,
      { eval: true, workerData: { root, lock } }
    );
    const messages = [];
    const next = () =>
      new Promise((resolve) => {
        if (messages.length) return resolve(messages.shift());
        waiter.once('message', resolve);
      });
    assert.strictEqual(await next(), 'waiting');
    await queued(lock, 1);
    const main = lock.acquire();
    await queued(lock, 2);
    await end(h, 'terminate');
    assert.deepStrictEqual(await next(), { abandoned: true }, 'the worker queued first');
    assert.strictEqual(lock.holder(), waiter.threadId);
    waiter.postMessage('unlock');
    assert.strictEqual(await next(), 'released');
    const release = await main;
    assert.strictEqual(release.abandoned, false);
    release();
    await waiter.terminate();
    assert.strictEqual(lock.isLocked(), false);
  });

  it('a thread that unlocked before it ended changes nothing', async () => {
    const lock = new AsyncLock();
    const h = holder(lock, { unlockFirst: true });
    await h.held;
    await end(h, 'exit');
    assert.strictEqual(lock.tryLock(), true);
    assert.strictEqual(lock.abandoned, false);
    lock.unlock();
  });

  it('only the words the ending thread holds are freed: another lock in the same buffer held by another thread stays held', async () => {
    const words = new Int32Array(new SharedArrayBuffer(8));
    const mine = new AsyncLock(words, 1);
    const theirs = new AsyncLock(words, 0);
    assert.strictEqual(mine.tryLock(), true);
    const h = holder(theirs, { alsoMade: [mine] });
    await h.held;
    await end(h, 'terminate');
    assert.strictEqual(mine.holder(), threadId, 'still the main thread\'s');
    assert.strictEqual(mine.abandoned, false);
    mine.unlock();
    assert.strictEqual(theirs.tryLock(), true);
    assert.strictEqual(theirs.abandoned, true);
    theirs.unlock();
  });

  it('a lock whose holding instance was garbage-collected is still given back when its thread ends', async () => {
    // In a child with --expose-gc (workers inherit it).
    const script = `
      const { Worker } = require('worker_threads');
      const { AsyncLock } = require(${JSON.stringify(root)});
      const lock = new AsyncLock();
      const worker = new Worker(\`
        const { parentPort, workerData } = require('worker_threads');
        const { AsyncLock } = require(workerData.root);
        AsyncLock.from(workerData.lock).lock(); // the instance is dropped at once
        for (let i = 0; i < 3; i++) gc();
        setImmediate(() => { gc(); parentPort.postMessage('collected'); });
        setInterval(() => {}, 1000);
      \`, { eval: true, workerData: { root: ${JSON.stringify(root)}, lock } });
      worker.once('message', async () => {
        const heldBy = lock.holder() === worker.threadId;
        await worker.terminate();
        const release = await lock.acquire({ timeout: 5000 });
        console.log(JSON.stringify({ heldBy, abandoned: release.abandoned }));
        release();
      });
    `;
    const result = await runNodeAsync(['--expose-gc', '-e', script]);
    assert.strictEqual(result.status, 0, result.stderr);
    assert.deepStrictEqual(JSON.parse(result.stdout), { heldBy: true, abandoned: true });
  });

  it('holder() names the holding thread: null when free, this threadId, a worker\'s', async () => {
    const lock = new AsyncLock();
    assert.strictEqual(lock.holder(), null);
    lock.lock();
    assert.strictEqual(lock.holder(), threadId);
    lock.unlock();
    const h = holder(lock, { unlockFirst: true });
    await h.held;
    assert.strictEqual(lock.holder(), h.worker.threadId);
    await end(h, 'end');
    assert.strictEqual(lock.holder(), null);
    assert.throws(() => AsyncLock.prototype.holder.call({}), TypeError);
    assert.throws(() => Reflect.get(AsyncLock.prototype, 'abandoned', {}), TypeError);
  });

  it('lock() through a second instance in the thread that holds the lock throws ERR_ASYNC_LOCK_DEADLOCK; with a timeout it times out', () => {
    const a = new AsyncLock();
    const b = new AsyncLock(a.sab);
    a.lock();
    assert.throws(() => b.lock(), { code: 'ERR_ASYNC_LOCK_DEADLOCK' });
    assert.strictEqual(b.lock(10), false);
    a.unlock();
    assert.strictEqual(b.lock(), true);
    b.unlock();
  });
});

describe('AsyncLock and memory', function () {
  this.timeout(60000);

  it('locks dropped while the release functions of their holds live, then released, leave nothing behind', async () => {
    // A lock dropped holding its word stays watched (and its buffer held)
    // until its thread ends, for the teardown to free: its release function
    // must keep it alive, so that it is collected once released instead.
    const grown = await droppedHoldsGrowth('asynclock');
    assert.ok(grown < 20000, `ArrayBuffer memory grew by ${grown} bytes over 10,000 instances`);
  });
});
