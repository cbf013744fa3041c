'use strict';
// Where the runtime has diagnostics_channel.tracingChannel, the calls that
// run f holding a lock (executeLocked/runExclusive, runShared) and the
// async takes are traced with tracePromise's events (start, end,
// asyncStart, asyncEnd; error when they reject) on
// `atomics-waitasync:<kind>:run` and `…:acquire`, while anyone listens
// there, on any of the five; and not at all once nobody does.

const assert = require('assert');
const { threadId } = require('worker_threads');
const dc = require('diagnostics_channel');
const { AsyncLock, RwLock, Semaphore } = require('../..');
const entry = require('../../async-mutex');
const { hasTracing } = require('../fixtures/diagnostics');

/** Subscribes to every event of `atomics-waitasync:<name>` (or only `only`); `events` lists them in order. */
function trace(name, only) {
  const tracing = dc.tracingChannel(`atomics-waitasync:${name}`);
  const events = [];
  const handlers = {};
  for (const event of only || ['start', 'end', 'asyncStart', 'asyncEnd', 'error']) {
    handlers[event] = (context) => events.push({ event, context, result: context.result, error: context.error });
  }
  tracing.subscribe(handlers);
  return { events, names: () => events.map((e) => e.event), stop: () => tracing.unsubscribe(handlers) };
}

describe('diagnostics: tracing', function () {
  before(function () {
    if (!hasTracing) this.skip(); // (Node < 18.19: no tracingChannel)
  });

  it('executeLocked: start, end (returned), asyncStart, asyncEnd with its result; f runs inside start', async () => {
    const t = trace('AsyncLock:run');
    try {
      const lock = new AsyncLock();
      let during;
      const done = lock.executeLocked(() => {
        during = t.names();
        return 42;
      });
      assert.deepStrictEqual(during, ['start'], 'f ran at once, inside the call');
      assert.deepStrictEqual(t.names(), ['start', 'end']);
      assert.strictEqual(await done, 42);
      assert.deepStrictEqual(t.names(), ['start', 'end', 'asyncStart', 'asyncEnd']);
      const { context } = t.events[0];
      assert.strictEqual(t.events.every((e) => e.context === context), true, 'one context');
      assert.strictEqual(context.instance, lock);
      assert.strictEqual(context.kind, 'AsyncLock');
      assert.strictEqual(context.method, 'executeLocked');
      assert.strictEqual(context.threadId, threadId);
      assert.deepStrictEqual(context.what, { lock: true });
      assert.strictEqual(t.events[3].result, 42);
      assert.strictEqual(done.constructor, Promise, 'still an intrinsic promise');
    } finally {
      t.stop();
    }
  });

  it('a store bound to start: f and every event in its context, as tracePromise has them; the caller not', async function () {
    if (typeof dc.channel('x').bindStore !== 'function') this.skip(); // (no stores)
    const { AsyncLocalStorage } = require('async_hooks');
    const store = new AsyncLocalStorage();
    const tracing = dc.tracingChannel('atomics-waitasync:AsyncLock:run');
    const seen = [];
    const handlers = {};
    for (const event of ['start', 'end', 'asyncStart', 'asyncEnd', 'error']) handlers[event] = () => seen.push(`${event} ${store.getStore()}`);
    tracing.subscribe(handlers);
    tracing.start.bindStore(store, (context) => `in ${context.method}`);
    try {
      const lock = new AsyncLock();
      assert.strictEqual(await lock.executeLocked(() => seen.push(`f ${store.getStore()}`)), 2);
      seen.push(`caller ${store.getStore()}`);
      await assert.rejects(lock.runExclusive(() => {
        throw new Error('f failed');
      }));
      assert.deepStrictEqual(seen, [
        'start in executeLocked', 'f in executeLocked', 'end in executeLocked', 'asyncStart in executeLocked', 'asyncEnd in executeLocked',
        'caller undefined',
        'start in executeLocked', 'end in executeLocked', 'error in executeLocked', 'asyncStart in executeLocked', 'asyncEnd in executeLocked',
      ]);
    } finally {
      tracing.start.unbindStore(store);
      tracing.unsubscribe(handlers);
    }
  });

  it('runExclusive of AsyncLock, and an f that throws: error, asyncStart, asyncEnd', async () => {
    const t = trace('AsyncLock:run');
    try {
      const lock = new AsyncLock();
      const failure = new Error('f failed');
      await assert.rejects(lock.runExclusive(() => {
        throw failure;
      }), (error) => error === failure);
      assert.deepStrictEqual(t.names(), ['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
      assert.strictEqual(t.events[2].error, failure);
      assert.strictEqual(lock.isLocked(), false);
    } finally {
      t.stop();
    }
  });

  it('a subscriber of asyncEnd alone is enough; once it leaves, nothing is traced', async () => {
    const lock = new AsyncLock();
    const t = trace('AsyncLock:run', ['asyncEnd']);
    await lock.executeLocked(() => 1);
    assert.deepStrictEqual(t.names(), ['asyncEnd']);
    t.stop();
    const spy = trace('AsyncLock:acquire'); // (another channel: not the one left)
    await lock.executeLocked(() => 2);
    assert.deepStrictEqual(t.names(), ['asyncEnd']);
    spy.stop();
    const before = dc.tracingChannel('atomics-waitasync:AsyncLock:run');
    assert.strictEqual(before.start.hasSubscribers, false);
  });

  it('acquire of AsyncLock and of async-mutex Mutex (as the Mutex), Mutex runExclusive', async () => {
    const lockTrace = trace('AsyncLock:acquire');
    const mutexTrace = trace('async-mutex/Mutex:acquire');
    const mutexRun = trace('async-mutex/Mutex:run');
    try {
      const lock = new AsyncLock();
      (await lock.acquire())();
      assert.deepStrictEqual(lockTrace.names(), ['start', 'end', 'asyncStart', 'asyncEnd']);
      assert.strictEqual(lockTrace.events[0].context.method, 'acquire');
      assert.strictEqual(typeof lockTrace.events[3].result, 'function');
      const mutex = new entry.Mutex();
      assert.strictEqual(await mutex.runExclusive(() => 'x'), 'x');
      assert.deepStrictEqual(mutexRun.names(), ['start', 'end', 'asyncStart', 'asyncEnd']);
      assert.strictEqual(mutexRun.events[0].context.instance, mutex);
      assert.strictEqual(mutexRun.events[0].context.kind, 'async-mutex/Mutex');
      // Its acquire, inside the run, as the Mutex's (not its AsyncLock's).
      assert.deepStrictEqual(mutexTrace.names(), ['start', 'end', 'asyncStart', 'asyncEnd']);
      assert.strictEqual(mutexTrace.events[0].context.instance, mutex);
      assert.strictEqual(lockTrace.events.length, 4);
    } finally {
      lockTrace.stop();
      mutexTrace.stop();
      mutexRun.stop();
    }
  });

  it('RwLock runShared and runExclusive (run, with the mode), read and write (acquire)', async () => {
    const run = trace('RwLock:run');
    const take = trace('RwLock:acquire');
    try {
      const rwlock = new RwLock();
      assert.strictEqual(await rwlock.runShared(() => 'r'), 'r');
      assert.strictEqual(await rwlock.runExclusive(() => 'w'), 'w');
      (await rwlock.read())();
      (await rwlock.write())();
      assert.deepStrictEqual(run.names(), ['start', 'end', 'asyncStart', 'asyncEnd', 'start', 'end', 'asyncStart', 'asyncEnd']);
      assert.deepStrictEqual(run.events.filter((e) => e.event === 'start').map((e) => [e.context.method, e.context.what.mode]), [
        ['runShared', 'read'],
        ['runExclusive', 'write'],
      ]);
      assert.deepStrictEqual(take.events.filter((e) => e.event === 'start').map((e) => e.context.method), ['read', 'write']);
    } finally {
      run.stop();
      take.stop();
    }
  });

  it('Semaphore runExclusive and acquire; async-mutex Semaphore runExclusive and acquire', async () => {
    const run = trace('Semaphore:run');
    const take = trace('Semaphore:acquire');
    const entryRun = trace('async-mutex/Semaphore:run');
    const entryTake = trace('async-mutex/Semaphore:acquire');
    try {
      const semaphore = new Semaphore(3);
      assert.strictEqual(await semaphore.runExclusive(() => 's', 2), 's');
      (await semaphore.acquire())();
      assert.deepStrictEqual(run.events[0].context.what, { permits: 2 });
      assert.deepStrictEqual(take.events[0].context.what, { permits: 1 });
      assert.deepStrictEqual([run.names().length, take.names().length], [4, 4]);
      const counted = new entry.Semaphore(2);
      assert.strictEqual(await counted.runExclusive((value) => value, 2), 2);
      assert.deepStrictEqual(entryRun.names(), ['start', 'end', 'asyncStart', 'asyncEnd']);
      assert.deepStrictEqual(entryTake.names(), ['start', 'end', 'asyncStart', 'asyncEnd']);
      assert.deepStrictEqual(entryTake.events[0].context.what, { permits: 2 });
    } finally {
      run.stop();
      take.stop();
      entryRun.stop();
      entryTake.stop();
    }
  });
});
