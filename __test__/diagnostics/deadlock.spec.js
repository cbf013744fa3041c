'use strict';
// Deadlock detection (opt-in): the wait that would close a cycle of takes
// that can never end fails at once with ERR_DEADLOCK naming the threads,
// the primitives and where each hold was taken; the others go on.
// Each case runs in a child process, where detection is switched on.

const assert = require('assert');
const { fixture, runNodeAsync } = require('../helpers');

/** Runs scenario `name` of fixtures/deadlock.js; its JSON report. */
async function scenario(name, env = {}) {
  const result = await runNodeAsync([fixture('deadlock.js'), name], { env: { ...process.env, ...env }, killAfter: 110000 });
  assert.deepStrictEqual([result.status, result.signal], [0, null], result.stderr);
  return { ...JSON.parse(result.stdout), stderr: result.stderr };
}

/** The threads of a cycle, in order. */
const threadsOf = (cycle) => cycle.map((link) => link.threadId);

describe('deadlock detection', function () {
  this.timeout(120000);

  it('ABBA between two blocked workers: the second wait throws ERR_DEADLOCK naming both threads, both locks and where each was taken; the other goes on', async () => {
    const r = await scenario('abba-blocking');
    assert.strictEqual(r.error.code, 'ERR_DEADLOCK');
    assert.deepStrictEqual(threadsOf(r.error.cycle), [r.second, r.first]);
    assert.deepStrictEqual(r.error.cycle.map((l) => [l.waitsFor.kind, l.waitsFor.name, l.heldBy, l.blocking]), [
      ['AsyncLock', 'a', r.first, true],
      ['AsyncLock', 'b', r.second, true],
    ]);
    assert.match(r.error.cycle[0].stack, /takeA/, 'where the first worker took a');
    assert.match(r.error.cycle[1].stack, /takeB/, 'where the second worker took b');
    assert.match(r.error.message, /thread \d+ waits \(blocking\) for AsyncLock "a", held by thread \d+/);
    assert.strictEqual(r.firstGotB, true, 'once the second released b, the first took it');
  });

  it('switched on while a worker is already blocked, detection sees that worker\'s wait: the wait that closes the cycle throws', async () => {
    const r = await scenario('abba-detect-late');
    assert.strictEqual(r.error && r.error.code, 'ERR_DEADLOCK');
    assert.deepStrictEqual(threadsOf(r.error.cycle), [r.second, r.first]);
    assert.strictEqual(r.firstGotB, true, 'once the second released b, the first took it');
  });

  it('a blocked worker and the main thread awaiting inside executeLocked: the main thread is told, by a rejection', async () => {
    const r = await scenario('abba-async');
    assert.strictEqual(r.error.code, 'ERR_DEADLOCK');
    assert.deepStrictEqual(threadsOf(r.error.cycle), [0, r.worker]);
    assert.strictEqual(r.error.cycle[0].blocking, false);
    assert.strictEqual(r.workerGotA, true);
    assert.deepStrictEqual(r.channel, [{ sameError: true, waitsOn: false }], 'the error, published on atomics-waitasync:deadlock');
  });

  it('an async task that waits while another task of its thread holds the lock is no deadlock', async () => {
    const r = await scenario('async-other-task');
    assert.strictEqual(r.error, null);
    assert.strictEqual(r.done, true);
  });

  it('a cycle of three threads', async () => {
    const r = await scenario('three');
    assert.strictEqual(r.error.code, 'ERR_DEADLOCK');
    assert.deepStrictEqual(threadsOf(r.error.cycle), [r.threads[2], r.threads[0], r.threads[1]]);
    assert.strictEqual(r.others, 2, 'the other two went on');
  });

  it('an RwLock writer waiting for a reader that waits for a lock the writer holds', async () => {
    const r = await scenario('rwlock');
    assert.strictEqual(r.error.code, 'ERR_DEADLOCK');
    assert.deepStrictEqual(r.error.cycle.map((l) => [l.waitsFor.kind, l.heldBy]), [
      ['RwLock', r.reader],
      ['AsyncLock', r.writer],
    ]);
    assert.match(r.error.message, /for the write lock of RwLock "rw"/);
  });

  it('a Semaphore whose every permit is held by threads that wait', async () => {
    const r = await scenario('semaphore');
    assert.strictEqual(r.error.code, 'ERR_DEADLOCK');
    assert.strictEqual(r.error.cycle[0].waitsFor.kind, 'Semaphore');
    assert.match(r.error.message, /for 2 permits of Semaphore "pool"/);
  });

  it('a Condition wait that re-takes its lock while the lock holder waits for what the waiter holds', async () => {
    const r = await scenario('condition');
    assert.strictEqual(r.error.code, 'ERR_DEADLOCK');
    assert.deepStrictEqual(r.error.cycle.map((l) => l.waitsFor.name).sort(), ['held-by-waiter', 'the-condition-lock']);
  });

  it('a Condition re-take that closes a cycle waits on and returns holding the lock, with a DeadlockWarning naming the cycle', async function () {
    if (typeof AbortController !== 'function') this.skip(); // (Node 14: the main thread gives up by an abort)
    const r = await scenario('condition-retake-closes');
    assert.deepStrictEqual([r.error, r.woken, r.holdsL1], [null, true, true], 'wait() returned as notified, holding its lock');
    assert.strictEqual(r.mainError, 'AbortError');
    assert.deepStrictEqual(r.published, { published: 'ERR_DEADLOCK', waitsOn: true }, 'published on atomics-waitasync:deadlock');
    const warning = r.stderr.split('\n').filter((line) => line.includes('DeadlockWarning'));
    assert.strictEqual(warning.length, 1, r.stderr);
    assert.match(warning[0], /\[ATOMICS_WAITASYNC_DEADLOCK\]/);
    assert.match(r.stderr, new RegExp(`thread ${r.waiter} waits \\(blocking\\) for AsyncLock "the-condition-lock", held by thread 0`));
    assert.match(r.stderr, /thread 0 waits \(async\) for AsyncLock "held-by-waiter"/);
  });

  it('a Condition consumer and producer, two tasks of one thread on one lock: no deadlock reported, and the producer keeps the lock to itself', async () => {
    const r = await scenario('condition-same-thread');
    assert.deepStrictEqual(r.error, null);
    assert.strictEqual(r.got, 'item');
    assert.strictEqual(r.stolen, false, 'another instance could take the lock inside the producer\'s critical section');
    assert.strictEqual(r.held, false);
    assert.deepStrictEqual(r.warnings, []);
  });

  it('a take with a timeout that closes a cycle waits on until its timeout, with one DeadlockWarning per cycle', async () => {
    const abba = await scenario('abba-timed');
    assert.deepStrictEqual([abba.error, abba.timedOut, abba.firstGotB], [null, true, true]);
    assert.match(abba.stderr, /\[ATOMICS_WAITASYNC_DEADLOCK\] DeadlockWarning: A take with a timeout is in a deadlock; it ends it at its timeout/);
    // The take with the timeout waits first; the one without closes the cycle: it is not failed either.
    const first = await scenario('abba-timed-first');
    assert.deepStrictEqual([first.error, first.timedOut, first.firstGotB], [null, false, false]);
    const self = await scenario('timed-self');
    assert.deepStrictEqual([self.error, self.got], [null, [false, false]]);
    assert.strictEqual(self.stderr.split('\n').filter((line) => line.includes('DeadlockWarning')).length, 1, self.stderr);
    assert.match(self.stderr, /waits \(blocking\) for 1 permit of Semaphore "pool", held by thread 0/);
  });

  it('on, an unawaited take\'s rejection is still unhandled; off again, the takes are the classes\' own, and a method the program put on since stays', async () => {
    const r = await scenario('wrappers-only-look');
    delete r.stderr; // (the timed take's DeadlockWarning: it waits for its own task's lock)
    assert.deepStrictEqual(r, { unhandled: 'ERR_ASYNC_LOCK_TIMEOUT', lockRestored: true, programsKept: true, seen: 1 });
  });

  it('a permit in flight (gone from the free count, in no stake yet: a take seen half done) counts as coming back: no deadlock reported', async () => {
    const r = await scenario('permit-in-flight');
    assert.deepStrictEqual(r.error, null);
  });

  it('permits two tasks of one thread hold, one of them waiting inside runExclusive: the other task\'s come back, no deadlock reported', async () => {
    const r = await scenario('permits-of-another-task');
    assert.deepStrictEqual([r.error, r.got], [null, 'got l']);
  });

  it('a timer set inside executeLocked that waits after the lock was released keeps no hold: no deadlock reported', async () => {
    const r = await scenario('context-after-its-scope');
    assert.deepStrictEqual([r.error, r.got], [null, 'got b']);
  });

  it('a wait on async-mutex\'s Semaphore, which anyone may signal, is in no cycle: no deadlock reported', async () => {
    const r = await scenario('signalled-semaphore');
    assert.deepStrictEqual([r.error, r.got], [null, 'signalled']);
  });

  it('a blocking wait whose end was lost is replaced by its thread\'s next blocking wait: no deadlock reported', async () => {
    const r = await scenario('wait-end-lost');
    assert.strictEqual(r.endLost, true, 'the first wait was still listed once it had ended');
    assert.deepStrictEqual(r.error, null);
  });

  it('is switched on by ATOMICS_WAITASYNC_DEBUG=deadlocks, with no call', async () => {
    const r = await scenario('abba-blocking-env', { ATOMICS_WAITASYNC_DEBUG: 'deadlocks' });
    assert.strictEqual(r.error.code, 'ERR_DEADLOCK');
  });

  it('off (the default), the same ABBA is not reported: the second take times out', async () => {
    const r = await scenario('abba-off');
    assert.strictEqual(r.error, null);
    assert.strictEqual(r.timedOut, true);
  });

  it('finds no deadlock in 10^6 takes of three locks in one order by four workers and the main thread', async () => {
    const r = await scenario('stress');
    assert.strictEqual(r.errors, 0);
    assert.strictEqual(r.operations, 1e6);
    assert.strictEqual(r.counter, r.operations, 'every critical section ran');
  });
});

describe('lock-order checks', function () {
  this.timeout(60000);

  it('two workers taking two locks in inverse orders at different times give exactly one warning, naming both and both stacks', async () => {
    const r = await scenario('lock-order');
    assert.strictEqual(r.warnings.length, 1);
    const [w] = r.warnings;
    assert.strictEqual(w.code, 'ATOMICS_WAITASYNC_LOCK_ORDER');
    assert.strictEqual(w.name, 'LockOrderWarning');
    assert.match(w.message, /took AsyncLock "first" while holding AsyncLock "second"|took AsyncLock "second" while holding AsyncLock "first"/);
    assert.match(w.detail, /inOrder/);
    assert.match(w.detail, /inReverse/);
  });

  it('two async tasks of one thread that each hold one lock are no order; one task nesting them in both orders is, once', async () => {
    const r = await scenario('lock-order-tasks');
    assert.strictEqual(r.sideBySide, 0, 'no warning from holds of different tasks');
    assert.strictEqual(r.nested, 1);
    assert.match(r.detail, /nestAB/);
    assert.match(r.detail, /nestBA/);
    assert.strictEqual(r.acquired, 1, 'one task holding release functions across awaits, in both orders');
    assert.strictEqual(r.tried, 0, 'a try makes no order');
  });
});
