// Compiled by `npm run test:types`: every line must type-check, and every
// line marked @ts-expect-error must fail to.
import { notify, ref, unref, wait, waitAsync, WaitAsyncResult } from '../..';

const i32 = new Int32Array(new SharedArrayBuffer(16));
const i64 = new BigInt64Array(new SharedArrayBuffer(16));

const r: WaitAsyncResult = waitAsync(i32, 0, 0, 100);
if (r.async) {
  const settled: Promise<'ok' | 'timed-out'> = r.value;
  void settled.then((s) => s === 'ok');
} else {
  const now: 'not-equal' | 'timed-out' = r.value;
  void now;
}
waitAsync(i64, 0, 0n);
const s: 'ok' | 'not-equal' | 'timed-out' = wait(i32, 0, 1, 0);
void s;
wait(i64, 1, 5n);
const woken: number = notify(i32, 0);
notify(i64, 0, 1);
ref();
unref();

// @ts-expect-error: a BigInt64Array needs a bigint value
waitAsync(i64, 0, 0);
// @ts-expect-error: an Int32Array needs a number value
wait(i32, 0, 0n);
// @ts-expect-error: Float64Array is not waitable
notify(new Float64Array(2), 0);
// @ts-expect-error: the result of notify is a number
const wrong: string = notify(i32, 0);
void woken;
void wrong;

// AsyncLock
import {
  AsyncLock,
  AsyncLockReleaser,
  Barrier,
  Condition,
  Latch,
  query,
  report,
  RwLock,
  RwLockOptions,
  RwLockReleaser,
  Semaphore,
  SemaphoreReleaser,
  SignalSemaphore,
  SignalSemaphoreOptions,
} from '../..';

const lockA = new AsyncLock(new SharedArrayBuffer(4));
const lockB = new AsyncLock(i32, 1);
const lockC = AsyncLock.from({ sab: lockA.sab, i32a: lockA.i32a, index: lockA.index });
const state: 0 | 1 | 2 = lockA.i32a[AsyncLock.INDEX] === AsyncLock.UNLOCKED ? AsyncLock.LOCKED : AsyncLock.CONTENDED;
void state;
const took: boolean = lockA.lock(100) && lockA.tryLock();
void took;
lockA.unlock();
lockB.release();
const lockedNow: boolean = lockC.isLocked();
void lockedNow;
const holderId: number | null = lockC.holder();
void holderId;
const inherited: boolean = lockC.abandoned;
void inherited;
const abandonedState: 1 = AsyncLock.ABANDONED;
void abandonedState;
const n: Promise<number> = lockA.executeLocked(() => 1);
const str: Promise<string> = lockA.runExclusive(async () => 'x', { timeout: 10 });
void n;
void str;
const controller = { aborted: false, addEventListener() {}, removeEventListener() {} };
void lockA.acquire({ signal: controller, timeout: 5 }).then((release: AsyncLockReleaser) => {
  const told: boolean = release.abandoned;
  void told;
  release();
  release[Symbol.dispose]();
  return release[Symbol.asyncDispose]();
});
const guard: () => void = lockA.lockGuard();
guard();
void lockA.waitForUnlock();
const wasLocked: boolean = lockA.forceUnlock();
void wasLocked;

const cond = new Condition(new SharedArrayBuffer(Condition.BYTES));
const condB = Condition.from({ sab: cond.sab, i32a: cond.i32a, index: cond.index });
const wokeSync: boolean = condB.wait(lockA, 10);
void wokeSync;
const wokeAsync: Promise<boolean> = lockA.executeLocked(() => cond.waitAsync(lockA, { timeout: 5, signal: controller }));
void wokeAsync;
const notified: number = cond.notify(2) + cond.notifyAll();
void notified;
const bytes: 4 = AsyncLock.BYTES;
void bytes;
const cancellable = waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, undefined, { signal: controller });
void cancellable;

const latch = new Latch(3, new SharedArrayBuffer(Latch.BYTES), 0);
const latchB = Latch.from({ i32a: latch.i32a, index: latch.index });
const left: number = latchB.countDown() + latchB.countDown(2) + latch.count;
void left;
const opened: boolean = latch.wait(10) && latch.tryWait() && latch.arriveAndWait(0, 5);
void opened;
const openedAsync: Promise<boolean> = latch.waitAsync({ timeout: 5, signal: controller });
void openedAsync;

const semaphore = new Semaphore(3, new SharedArrayBuffer(Semaphore.BYTES));
const semaphoreB = Semaphore.from({ sab: semaphore.sab, index: semaphore.index });
const tookPermits: boolean = semaphoreB.tryAcquire(2) && semaphore.acquireSync(1, 10);
void tookPermits;
semaphoreB.release(2);
const free: number = semaphore.available + semaphore.permits + semaphore.held;
void free;
const permitGuard: SemaphoreReleaser = semaphore.acquireGuard(1, 5);
const givesBack: number = permitGuard.permits;
void givesBack;
void semaphore.acquire(2, { timeout: 5, signal: controller }).then((release) => release());
const ranWith: Promise<string> = semaphore.runExclusive(async () => 'x', 2);
void ranWith;

const items = new SignalSemaphore();
const slotsFree = new SignalSemaphore(4, new SharedArrayBuffer(2 * SignalSemaphore.BYTES), 2);
const itemsB = SignalSemaphore.from({ sab: items.sab, i32a: items.i32a, index: items.index });
itemsB.release();
items.release(2);
const tookItems: boolean = items.tryAcquire() && itemsB.tryAcquire(2) && slotsFree.acquireSync(1, 10);
void tookItems;
const itemsFree: number = items.available;
void itemsFree;
const itemOptions: SignalSemaphoreOptions = { timeout: 5, signal: controller, priority: 1 };
const taken: Promise<void> = items.acquire(1, itemOptions);
void taken;

const barrier = new Barrier(2, new SharedArrayBuffer(Barrier.BYTES), 0);
const barrierB = Barrier.from({ i32a: barrier.i32a, index: barrier.index });
const arrivalIndex: number = barrierB.arriveAndWait(10);
void arrivalIndex;
const arrivedAsync: Promise<number> = barrier.arriveAndWaitAsync({ timeout: 5, signal: controller });
void arrivedAsync;
const barrierState: boolean = barrier.broken && barrier.waiting < barrier.parties;
void barrierState;
barrier.reset();
// @ts-expect-error: broken is read-only
barrier.broken = false;

const rwlock = new RwLock(new SharedArrayBuffer(RwLock.BYTES), 0);
const rwlockB = RwLock.from({ sab: rwlock.sab, i32a: rwlock.i32a, index: rwlock.index });
const rwlockC = new RwLock();
const tookRead: boolean = rwlockB.tryRead() && rwlockB.readSync(10) && rwlockC.tryWrite() && rwlock.writeSync();
void tookRead;
rwlockB.releaseRead();
rwlock.releaseWrite();
const readersNow: number = rwlock.readers + rwlock.readsHeld;
void readersNow;
const writerNow: boolean = rwlock.writeLocked || rwlock.writeHeld;
void writerNow;
const rwBytes: 8 = RwLock.BYTES;
void rwBytes;
const readGuard: RwLockReleaser = rwlock.readGuard(5);
const rwAbandoned: boolean = rwlock.abandoned || readGuard.abandoned;
void rwAbandoned;
const guardMode: 'read' | 'write' = readGuard.mode;
void guardMode;
readGuard();
readGuard[Symbol.dispose]();
const writeGuard: () => void = rwlock.writeGuard();
writeGuard();
const rwOptions: RwLockOptions = { timeout: 5, signal: controller };
void rwlock.read(rwOptions).then((release) => release());
void rwlock.write().then((release: RwLockReleaser) => release[Symbol.asyncDispose]());
const sharedResult: Promise<number> = rwlock.runShared(() => 1, { timeout: 5 });
void sharedResult;
const exclusiveResult: Promise<string> = rwlock.runExclusive(async () => 'x', { signal: controller });
void exclusiveResult;
// @ts-expect-error: readers is read-only
rwlock.readers = 0;
// @ts-expect-error: writeHeld is read-only
rwlock.writeHeld = true;
// @ts-expect-error: an RwLock is made from a buffer, not a count
new RwLock(2);
// @ts-expect-error: the timeout is a number
rwlock.readSync('10');
// @ts-expect-error: read takes an options object, not a timeout
void rwlock.read(10);
// @ts-expect-error: runShared needs a function
void rwlock.runShared(42);
// @ts-expect-error: releaseWrite gives back the one write lock
rwlock.releaseWrite(1);
// @ts-expect-error: a release function's mode is 'read' or 'write'
const sharedMode: 'shared' = readGuard.mode;
void sharedMode;

// @ts-expect-error: a semaphore is made from its permits
new Semaphore();
// @ts-expect-error: available is read-only
semaphore.available = 3;
// @ts-expect-error: a signalling semaphore has no release functions
void items.acquire().then((release) => release());
// @ts-expect-error: nor a count of what an instance holds
void items.held;
// @ts-expect-error: a latch is made from a count
new Latch();
// @ts-expect-error: the count is read-only
latch.count = 0;
// @ts-expect-error: countDown takes a number
latch.countDown('1');
// @ts-expect-error: a condition waits with a lock
cond.wait();
// @ts-expect-error: notify takes a count
cond.notify('all');
// @ts-expect-error: the 5th argument of waitAsync is an options object
waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, undefined, 5);
// @ts-expect-error: a Float64Array cannot hold a lock
new AsyncLock(new Float64Array(2));
// @ts-expect-error: executeLocked needs a function
void lockA.executeLocked(42);
// @ts-expect-error: the timeout is a number
lockA.lock('10');
// @ts-expect-error: options.timeout is a number
void lockA.acquire({ timeout: '10' });
// @ts-expect-error: the statics are constants
AsyncLock.LOCKED = 3;
// @ts-expect-error: abandoned is read-only
lockA.abandoned = false;
// @ts-expect-error: holder() may be null
const holderNumber: number = lockA.holder();
void holderNumber;

// Priorities on the takes of the lock family.
void lockA.acquire({ priority: 2 });
// @ts-expect-error: a priority is a number
void lockA.acquire({ priority: 'high' });
// @ts-expect-error: a condition's wait takes no priority
void cond.waitAsync(lockA, { priority: 1 });

// atomics-waitasync/async-mutex: async-mutex's API.
import { Mutex, Semaphore as AmSemaphore, withTimeout, tryAcquire, E_CANCELED, E_TIMEOUT, MutexInterface, SemaphoreInterface } from '../../async-mutex';
const amMutex: MutexInterface = new Mutex(new Error('canceled'));
const amSemaphore: SemaphoreInterface = new AmSemaphore(-2);
async function amUsage(): Promise<void> {
  const release: MutexInterface.Releaser = await amMutex.acquire(5);
  release();
  const [value, releasePermits] = await amSemaphore.acquire(2, 1);
  const n: number = value;
  releasePermits();
  const result: string = await withTimeout(amMutex, 100).runExclusive(() => 'x' + n);
  await tryAcquire(amSemaphore).runExclusive((v: number) => v);
  const posted = Mutex.from({ sab: new SharedArrayBuffer(4), i32a: new Int32Array(new SharedArrayBuffer(4)), index: 0 });
  posted.cancel();
  void [result, E_CANCELED, E_TIMEOUT];
}
void amUsage;
// @ts-expect-error: a Mutex's acquire takes a priority, not a weight and a priority
void amMutex.acquire(1, 2);
// @ts-expect-error: a Semaphore is made from a value
new AmSemaphore();

// Names, query() and report().
{
  const named = new AsyncLock({ name: 'orders' });
  const sem = new Semaphore(3, { name: 'pool' });
  const rw = new RwLock(new SharedArrayBuffer(8), 0, { name: 'table' });
  const copy: AsyncLock = AsyncLock.from(named, { name: 'copy' });
  const n: string | undefined = named.name ?? sem.name ?? rw.name ?? copy.name;
  const snapshot = query();
  for (const p of snapshot.primitives) {
    const kind: string = p.kind;
    for (const h of p.holders) {
      const t: number = h.threadId;
    }
    for (const w of p.waiters) {
      const b: boolean = w.blocking;
    }
  }
  const text: string = report(snapshot) + report();
  void n;
  void text;
}
