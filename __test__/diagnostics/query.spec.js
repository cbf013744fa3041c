'use strict';
// query(), report() and util.inspect: who holds what and who waits for
// what, seen from any thread while the others are blocked.

const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const util = require('util');
const helpers = require('../helpers');
const { AsyncLock, Semaphore, SignalSemaphore, RwLock, Latch, Barrier, Condition, query, report } = require('../..');

const { primitiveWorker, root, runNodeAsync } = helpers;

/** The entry of `query()` for the primitive over `instance`'s slot. */
function entryOf(instance, snapshot = query()) {
  const found = snapshot.primitives.filter((p) => p.kind === instance.constructor.name && sameSlot(p, instance));
  assert.strictEqual(found.length, 1, `one entry for the ${instance.constructor.name}`);
  return found[0];
}
// (A named instance is found by its name; the others by being the only one
// of their kind with that index in a buffer of their byte length.)
const sameSlot = (p, instance) => (instance.name !== undefined ? p.name === instance.name : p.index === instance.index);

describe('query(): who holds and who waits, from any thread', function () {
  this.timeout(60000);

  it('lists, from the main thread, what a blocked worker holds: a lock, permits, a read, a write', async () => {
    const lock = new AsyncLock({ name: 'orders' });
    const pool = new Semaphore(5, { name: 'pool' });
    const table = new RwLock(undefined, undefined, { name: 'table' });
    const index = new RwLock({ name: 'index' });
    const go = new Latch(1, { name: 'go' });
    const w = primitiveWorker(
      [['AsyncLock', 'lock'], ['Semaphore', 'pool'], ['RwLock', 'table'], ['Latch', 'go']],
      (lock, pool, table, go, data, workerData, parentPort) => {
        lock.lock();
        pool.acquireSync(3);
        table.readSync();
        table.readSync();
        parentPort.postMessage('holding');
        go.wait(); // blocked until the main thread has looked
        lock.unlock();
        pool.release(3);
      },
      { lock, pool, table, go }
    );
    index.writeSync();
    assert.strictEqual(await w.next(), 'holding');
    const snapshot = query();
    assert.deepStrictEqual(entryOf(lock, snapshot).holders, [{ threadId: w.threadId, mode: 'exclusive' }]);
    assert.deepStrictEqual(entryOf(pool, snapshot).holders, [{ threadId: w.threadId, permits: 3 }]);
    assert.deepStrictEqual(entryOf(pool, snapshot).state, { free: 2, permits: 5 });
    assert.deepStrictEqual(entryOf(table, snapshot).holders, [{ threadId: w.threadId, mode: 'read', reads: 2 }]);
    assert.deepStrictEqual(entryOf(index, snapshot).holders, [{ threadId: 0, mode: 'write' }]);
    index.releaseWrite();
    assert.deepStrictEqual(entryOf(lock, snapshot).threads, [0, w.threadId], 'both threads have an instance');
    go.countDown();
    await w.done();
    const after = query();
    assert.deepStrictEqual(entryOf(lock, after).holders, [], 'released');
    assert.deepStrictEqual(entryOf(lock, after).threads, [0], "the ended worker's instances are gone");
    assert.deepStrictEqual(entryOf(pool, after).holders, []);
  });

  it("lists the takes that wait: a blocked worker's lock(), the main thread's pending acquire()s, with what each asked for", async () => {
    const lock = new AsyncLock({ name: 'contended' });
    const pool = new Semaphore(1, { name: 'one-permit' });
    const items = new SignalSemaphore(0, { name: 'items' });
    lock.lock();
    const w = primitiveWorker([['AsyncLock', 'lock']], (lock, data, workerData, parentPort) => {
      lock.lock();
      lock.unlock();
      parentPort.postMessage('done');
    }, { lock });
    const until = async (pred) => {
      while (!pred()) await new Promise((resolve) => setImmediate(resolve));
    };
    await until(() => entryOf(lock).waiters.length === 1);
    pool.acquireSync(1);
    const permit = pool.acquire(1);
    const item = items.acquire(2);
    const snapshot = query();
    const [blocked] = entryOf(lock, snapshot).waiters;
    assert.deepStrictEqual([blocked.threadId, blocked.blocking, blocked.mode], [w.threadId, true, 'exclusive']);
    assert.ok(blocked.since <= snapshot.at && blocked.waitedMs >= 0);
    const [asked] = entryOf(pool, snapshot).waiters;
    assert.deepStrictEqual([asked.threadId, asked.blocking, asked.permits], [0, false, 1]);
    assert.deepStrictEqual(entryOf(items, snapshot).waiters.map((x) => [x.threadId, x.blocking, x.permits]), [[0, false, 2]]);
    assert.match(report(snapshot), /AsyncLock "contended": held by thread 0, 1 waiting[^\n]*\n {4}thread \d+ waits \(blocking\) for the lock, \d+ ms/);
    lock.unlock();
    assert.strictEqual(await w.next(), 'done');
    pool.release(1);
    (await permit)();
    items.release(2);
    await item;
    const after = query();
    for (const p of [lock, pool, items]) assert.deepStrictEqual(entryOf(p, after).waiters, [], 'no wait left registered');
    await w.done();
  });

  it('lists every wait of a thread that has hundreds at once, each with what it asked for, and none once they ended', async () => {
    const pool = new Semaphore(2, { name: 'hundreds' });
    await pool.acquire(2);
    const takes = [];
    for (let n = 1; n <= 300; n++) takes.push(pool.runExclusive(() => n, 1 + (n % 2)));
    const waiters = query().primitives.find((p) => p.name === 'hundreds').waiters;
    assert.strictEqual(waiters.length, 300);
    assert.deepStrictEqual(
      waiters.map((w) => w.permits).sort(),
      takes.map((_, i) => 1 + ((i + 1) % 2)).sort(),
      'each with the permits it asked for'
    );
    assert.ok(waiters.every((w) => w.threadId === 0 && w.blocking === false && w.since <= Date.now() + 1));
    pool.release(2);
    assert.strictEqual((await Promise.all(takes)).length, 300);
    assert.deepStrictEqual(query().primitives.find((p) => p.name === 'hundreds').waiters, []);
  });

  it('drops the wait of a worker terminated while it waits', async () => {
    const lock = new AsyncLock({ name: 'waited-on-by-the-dead' });
    lock.lock();
    const w = primitiveWorker([['AsyncLock', 'lock']], (lock) => lock.lock(), { lock });
    while (entryOf(lock).waiters.length === 0) await new Promise((resolve) => setImmediate(resolve));
    assert.strictEqual(entryOf(lock).waiters[0].threadId, w.threadId);
    await w.terminate();
    assert.deepStrictEqual(entryOf(lock).waiters, []);
    lock.unlock();
  });

  it('shows a lock whose holder died holding it as abandoned, held by nobody', async () => {
    const lock = new AsyncLock({ name: 'abandoned-here' });
    const w = primitiveWorker([['AsyncLock', 'lock']], (lock, data, workerData, parentPort) => {
      lock.lock();
      parentPort.postMessage('held');
      for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    }, { lock });
    assert.strictEqual(await w.next(), 'held');
    assert.deepStrictEqual(entryOf(lock).holders, [{ threadId: w.threadId, mode: 'exclusive' }]);
    await w.terminate();
    const entry = entryOf(lock);
    assert.deepStrictEqual([entry.holders, entry.abandoned, entry.state.locked], [[], true, false]);
    assert.match(report(), /AsyncLock "abandoned-here": free, abandoned/);
  });

  it('gives a name at construction, keeps it through postMessage and from(), and refuses a name that is not a string', async () => {
    const lock = new AsyncLock({ name: 'posted' });
    assert.strictEqual(lock.name, 'posted');
    assert.strictEqual(new AsyncLock().name, undefined);
    assert.deepStrictEqual(Object.keys(new AsyncLock()).sort(), ['i32a', 'index', 'sab'], 'no name field unless given');
    assert.strictEqual(AsyncLock.from(lock, { name: 'renamed' }).name, 'renamed');
    const w = primitiveWorker([['AsyncLock', 'lock']], (lock, data, workerData, parentPort) => {
      parentPort.postMessage(lock.name);
    }, { lock });
    assert.strictEqual(await w.next(), 'posted');
    await w.done();
    for (const make of [() => new AsyncLock({ name: 1 }), () => new Semaphore(1, { name: null }), () => new RwLock(undefined, undefined, { name: {} })]) {
      assert.throws(make, { name: 'TypeError', message: /"options\.name" property must be a string/ });
    }
    assert.throws(() => new Latch(1, undefined, undefined, 'x'), { name: 'TypeError', message: /"options" argument must be an object/ });
    // A posted instance given to the constructor (instead of from()) is a
    // bad sab, as it always was: never options, never a fresh lock.
    const posted = { sab: lock.sab, i32a: lock.i32a, index: lock.index, name: 'posted' };
    assert.throws(() => new AsyncLock(posted), { name: 'TypeError', message: /"sab"/ });
    assert.throws(() => new Semaphore(1, posted), { name: 'TypeError', message: /"sab"/ });
  });

  it('util.inspect shows a primitive in one line: its name, holder and state', async () => {
    const lock = new AsyncLock({ name: 'inspected' });
    assert.strictEqual(util.inspect(lock), 'AsyncLock "inspected" { free }');
    const w = primitiveWorker([['AsyncLock', 'lock']], (lock, data, workerData, parentPort) => {
      lock.lock();
      parentPort.postMessage('held');
      parentPort.once('message', () => lock.unlock());
    }, { lock });
    assert.strictEqual(await w.next(), 'held');
    assert.strictEqual(util.inspect(lock), `AsyncLock "inspected" { held by thread ${w.threadId} }`);
    w.postMessage('go');
    await w.done();
    const sem = new Semaphore(3);
    sem.acquireSync(1);
    assert.strictEqual(util.inspect(sem), 'Semaphore { 2 of 3 free, held by thread 0 (1 permit) }');
    sem.release(1);
    assert.strictEqual(util.inspect(new Latch(2, { name: 'l' })), 'Latch "l" { count 2 }');
    assert.strictEqual(util.inspect(new Barrier(3)), 'Barrier { 0 of 3 arrived }');
    assert.strictEqual(util.inspect(new Condition()), 'Condition { idle }');
    assert.strictEqual(util.inspect(new SignalSemaphore(2, { name: 'items' })), 'SignalSemaphore "items" { 2 available }');
  });

  it('report() is one line per primitive in use, naming its holders', () => {
    const lock = new AsyncLock({ name: 'reported' });
    lock.lock();
    try {
      const text = report();
      assert.match(text, /^atomics-waitasync: \d+ primitives? in use at \d{4}-/);
      assert.match(text, /\n {2}AsyncLock "reported": held by thread 0 \(threads 0\)/);
      assert.strictEqual(report(query()).split('\n')[1] !== undefined, true);
    } finally {
      lock.unlock();
    }
  });

  it('sees the instances and holds of two copies of the package in one process', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atomics-waitasync-query-'));
    try {
      const binary = require('../../binding')[Symbol.for('atomics-waitasync.binaryPath')];
      const a = path.join(dir, 'a');
      const b = path.join(dir, 'b');
      helpers.copyPackage(root, a, binary);
      helpers.copyPackage(root, b, binary);
      const env = { ...process.env };
      delete env.ATOMICS_WAITASYNC_BINARY;
      const source = `
        const A = require(${JSON.stringify(a)});
        const B = require(${JSON.stringify(b)});
        const { Worker } = require('worker_threads');
        const lock = new A.AsyncLock({ name: 'through-a' });
        const sem = new B.Semaphore(4, { name: 'through-b' });
        const go = new Int32Array(new SharedArrayBuffer(4));
        const w = new Worker(\`
          const { workerData: { lock, sem, go }, parentPort } = require('worker_threads');
          const B = require(${JSON.stringify(b)});
          B.AsyncLock.from(lock).lock();
          B.Semaphore.from(sem).acquireSync(3);
          parentPort.postMessage('held');
          Atomics.wait(go, 0, 0);
        \`, { eval: true, workerData: { lock, sem, go } });
        w.once('message', () => {
          const seen = A.query().primitives.filter((p) => p.name !== undefined);
          console.log(JSON.stringify({ worker: w.threadId, seen: seen.map((p) => [p.name, p.holders, p.threads]) }));
          Atomics.store(go, 0, 1);
          Atomics.notify(go, 0);
        });
      `;
      const result = await runNodeAsync(['-e', source], { env });
      assert.deepStrictEqual([result.status, result.signal], [0, null], result.stderr);
      const { worker, seen } = JSON.parse(result.stdout);
      assert.deepStrictEqual(seen, [
        ['through-a', [{ threadId: worker, mode: 'exclusive' }], [0, worker]],
        ['through-b', [{ threadId: worker, permits: 3 }], [0, worker]],
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
