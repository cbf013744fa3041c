// Type definitions for atomics-waitasync. Hand-written; checked by
// __test__/types (npm run test:types).

/** A typed array `wait`, `waitAsync` and `notify` accept. */
export type WaitableArray = Int32Array | BigInt64Array;

/** The synchronous results of `waitAsync`. */
export interface WaitAsyncSyncResult {
  async: false;
  value: 'not-equal' | 'timed-out';
}

/**
 * The asynchronous result of `waitAsync`. The promise never rejects, except
 * with the reason of the `signal` of a cancellable wait (`WaitAsyncOptions`).
 */
export interface WaitAsyncAsyncResult {
  async: true;
  value: Promise<'ok' | 'timed-out'>;
}

export type WaitAsyncResult = WaitAsyncSyncResult | WaitAsyncAsyncResult;

/**
 * `Atomics.waitAsync` as ECMA-262 defines it, on every runtime. Never
 * blocks. `timeout` is in milliseconds (default +Infinity).
 *
 * @throws {TypeError} `typedArray` is not an Int32Array or BigInt64Array
 *   over a SharedArrayBuffer, or `value` has the wrong type.
 * @throws {RangeError} `index` is out of range.
 */
export function waitAsync(
  typedArray: Int32Array,
  index: number,
  value: number,
  timeout?: number,
  options?: WaitAsyncOptions
): WaitAsyncResult;
export function waitAsync(
  typedArray: BigInt64Array,
  index: number,
  value: bigint,
  timeout?: number,
  options?: WaitAsyncOptions
): WaitAsyncResult;

/**
 * The package's own 5th argument of `waitAsync` (the spec's four are
 * unchanged): with `signal`, an abort takes the waiter out of its queue (a
 * later `notify` neither wakes nor counts it) and the promise rejects with
 * `signal.reason` (an AbortError where the runtime has none); an already
 * aborted signal rejects without queueing, after the spec's argument checks.
 * An abort that comes once a notify or the timeout took the waiter changes
 * nothing: the promise resolves 'ok' or 'timed-out'.
 */
export interface WaitAsyncOptions {
  signal?: AsyncLockAbortSignal;
}

/**
 * `Atomics.wait` as ECMA-262 defines it: blocks the calling thread until
 * notified ('ok'), timed out ('timed-out'), or returns at once
 * ('not-equal'). Works on Node's main thread, as the built-in does.
 */
export function wait(typedArray: Int32Array, index: number, value: number, timeout?: number): 'ok' | 'not-equal' | 'timed-out';
export function wait(typedArray: BigInt64Array, index: number, value: bigint, timeout?: number): 'ok' | 'not-equal' | 'timed-out';

/**
 * `Atomics.notify` as ECMA-262 defines it: wakes up to `count` (default
 * all) waiters on the element, oldest first, sync and async alike, in every
 * thread; returns how many it woke. 0 for a non-shared buffer.
 */
export function notify(typedArray: WaitableArray, index: number, count?: number): number;

/**
 * Pending `waitAsync` calls of this thread keep its event loop alive (the
 * default, unlike the built-in).
 */
export function ref(): void;

/**
 * Pending `waitAsync` calls of this thread no longer keep its event loop
 * alive (for daemons); the promises still settle while the loop runs.
 */
export function unref(): void;

/** Options of `install`. */
export interface InstallOptions {
  /** Replace the runtime's own `Atomics.waitAsync`, `wait` and `notify` too. */
  force?: boolean;
}

/** What `install` did. */
export interface InstallResult {
  /** The names this call defined on `Atomics`; empty when it changed nothing. */
  installed: Array<'waitAsync' | 'wait' | 'notify'>;
  /** Whether `Atomics.waitAsync`, `wait` and `notify` are the package's now. */
  active: boolean;
}

/**
 * The polyfill, for this thread: puts the package's `waitAsync`, `wait` and
 * `notify` on `Atomics` where `Atomics.waitAsync` is missing (or always, with
 * `force`). Installing again changes nothing. `require('atomics-waitasync/polyfill')`
 * calls it without options.
 *
 * @throws {TypeError} `options` is not an object.
 */
export function install(options?: InstallOptions): InstallResult;

// Where the lib in use lacks them (es2020, Node < 18.18 types): the symbols
// of explicit resource management, declared the way @types/node does.
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol;
    readonly asyncDispose: unique symbol;
  }
}

/** An `AbortSignal` (Node's or the DOM's), or any object shaped like one. */
export interface AsyncLockAbortSignal {
  readonly aborted: boolean;
  readonly reason?: any;
  addEventListener(type: 'abort', listener: (event: any) => void): void;
  removeEventListener(type: 'abort', listener: (event: any) => void): void;
}

/** Bounds on an async wait for the lock. */
export interface AsyncLockOptions {
  /**
   * Give up after this many milliseconds (>= 0, default Infinity): rejects
   * with an Error whose `code` is `'ERR_ASYNC_LOCK_TIMEOUT'`.
   */
  timeout?: number;
  /** Give up when it aborts: rejects with `signal.reason` (or an AbortError). */
  signal?: AsyncLockAbortSignal;
  /**
   * Where the take waits among this instance's waiting takes (a finite
   * number, default 0): before those of a lower priority, after those of
   * the same or a higher one (first come, first served). Takes of
   * AsyncLock, Semaphore, SignalSemaphore and RwLock only.
   */
  priority?: number;
}

/**
 * Releases the lock it came with; calling it again does nothing. Also
 * `[Symbol.dispose]` / `[Symbol.asyncDispose]` for `using` / `await using`
 * (present at run time only where the runtime has those symbols: Node 18.18+,
 * 20.4+, Bun).
 */
export interface AsyncLockReleaser {
  (): void;
  /**
   * Whether this hold was inherited from a thread that ended while holding
   * the lock (terminated, `process.exit()`, an uncaught exception, its script
   * ending): what the lock guards may be half updated.
   */
  readonly abandoned: boolean;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/** What `postMessage` delivers for an AsyncLock (its own fields), or a hand-made slot. */
export type AsyncLockSource =
  | { readonly i32a: Int32Array; readonly index?: number }
  | { readonly sab: SharedArrayBuffer; readonly index?: number };

/** A condition variable's async wait bounds: `timeout` and `signal`, as `AsyncLockOptions`. */
export type ConditionOptions = Omit<AsyncLockOptions, 'priority'>;

/**
 * A condition variable in one Int32 slot of a SharedArrayBuffer, used with
 * an `AsyncLock`: `wait(lock)` blocks (workers, Node's main thread),
 * `waitAsync(lock)` never does. A wait releases the lock and holds it again
 * when it returns, however it ends. Wake-ups may be spurious: wait in a loop
 * on your own condition. Each thread builds its own instance over the same
 * slot (`Condition.from`).
 */
export class Condition {
  /** The bytes of SharedArrayBuffer a condition takes. */
  static readonly BYTES: 4;
  /**
   * A new instance over the slot of a posted one (`{ sab, i32a, index }`).
   *
   * @throws {TypeError} `value` has neither `i32a` nor `sab`.
   */
  static from(value: AsyncLockSource, options?: PrimitiveOptions): Condition;
  /**
   * `new Condition()` (a fresh 4-byte SharedArrayBuffer), `new Condition(sab)`
   * (its first Int32), `new Condition(sab, index)`, `new Condition(int32Array, index)`.
   *
   * @throws {TypeError} `sab` is not a SharedArrayBuffer or an Int32Array over one.
   * @throws {RangeError} `index` is not an integer slot of the array.
   */
  constructor(sab?: SharedArrayBuffer | Int32Array, index?: number, options?: PrimitiveOptions);
  constructor(options: PrimitiveOptions);

  readonly sab: SharedArrayBuffer;
  readonly i32a: Int32Array;
  readonly index: number;
  /** The name given at construction (or by the posted instance); absent when none was. */
  readonly name?: string;

  /**
   * Releases `lock` (held by this thread through that instance), blocks until
   * notified or `timeout` ms passed, takes the lock again; true if woken (or
   * spuriously), false on timeout. Check `lock.abandoned` after it.
   *
   * @throws {Error} code `'ERR_ASYNC_LOCK_NOT_HELD'`: `lock` is not held through this instance.
   */
  wait(lock: AsyncLock, timeout?: number): boolean;
  /**
   * `wait(lock)` without blocking: resolves holding the lock again; rejects
   * with `options.signal`'s reason (holding the lock again) if it aborts
   * first (after a notify or the timeout took the waiter, an abort changes
   * nothing). Use inside `lock.executeLocked(f)` or between `acquire()` and its release.
   */
  waitAsync(lock: AsyncLock, options?: ConditionOptions): Promise<boolean>;
  /** Wakes up to `count` (default 1) waiters, oldest first; returns how many were asleep. */
  notify(count?: number): number;
  /** Wakes every waiter; returns how many. */
  notifyAll(): number;
}

/** A latch's async wait bounds: `timeout` and `signal`, as `AsyncLockOptions`. */
export type LatchOptions = Omit<AsyncLockOptions, 'priority'>;

/**
 * A count in one Int32 slot of a SharedArrayBuffer that threads count down,
 * once, to zero; waiters go on when it reaches zero (Java's CountDownLatch,
 * C++'s std::latch). `wait()` blocks (workers, Node's main thread),
 * `waitAsync()` never does. A thread that ends before it counts down never
 * does: wait with a timeout or a signal where a worker may die first. Each
 * thread builds its own instance over the same slot (`Latch.from`).
 */
export class Latch {
  /** The bytes of SharedArrayBuffer a latch takes. */
  static readonly BYTES: 4;
  /**
   * A new instance over the slot of a posted one (`{ sab, i32a, index }`);
   * writes nothing.
   *
   * @throws {TypeError} `value` has neither `i32a` nor `sab`.
   */
  static from(value: AsyncLockSource, options?: PrimitiveOptions): Latch;
  /**
   * `new Latch(count)` (a fresh 4-byte SharedArrayBuffer), `new Latch(count, sab)`
   * (its first Int32), `new Latch(count, sab, index)`, `new Latch(count, int32Array, index)`:
   * writes `count` into the slot.
   *
   * @throws {TypeError} `count` is not a number; `sab` is not a SharedArrayBuffer or an Int32Array over one.
   * @throws {RangeError} `count` is not an integer from 0 to 2^31 - 1; `index` is not an integer slot of the array.
   */
  constructor(count: number, sab?: SharedArrayBuffer | Int32Array, index?: number, options?: PrimitiveOptions);
  constructor(count: number, options: PrimitiveOptions);

  readonly sab: SharedArrayBuffer;
  readonly i32a: Int32Array;
  readonly index: number;
  /** The name given at construction (or by the posted instance); absent when none was. */
  readonly name?: string;
  /** The count now (a snapshot); 0 once the latch is open. */
  readonly count: number;

  /**
   * Counts down by `n` (default 1); returns the count left. The count-down
   * that reaches 0 wakes every waiter.
   *
   * @throws {TypeError} `n` is not a number.
   * @throws {RangeError} `n` is not an integer from 0 to 2^31 - 1; code
   *   `'ERR_LATCH_COUNT_EXCEEDED'`: `n` is more than the count left, also on an
   *   open latch (nothing changed).
   */
  countDown(n?: number): number;
  /** Whether the count is 0; never waits. */
  tryWait(): boolean;
  /** Blocks until the count is 0 (true), or `timeout` ms passed first (false). */
  wait(timeout?: number): boolean;
  /**
   * `wait()` without blocking: resolves true once the count is 0, false after
   * `options.timeout` ms; rejects with `options.signal`'s reason if it aborts
   * first (an abort once the count is 0 changes nothing). Nothing of it is
   * left queued either way.
   */
  waitAsync(options?: LatchOptions): Promise<boolean>;
  /** `countDown(n)`, then `wait(timeout)`. */
  arriveAndWait(n?: number, timeout?: number): boolean;
}

/** A semaphore's async wait bounds: as `AsyncLockOptions`. */
export type SemaphoreOptions = AsyncLockOptions;

/** A release function of permits (idempotent), disposable. */
export interface SemaphoreReleaser {
  (): void;
  /** How many permits it gives back. */
  readonly permits: number;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Permits in three Int32s of a SharedArrayBuffer, taken and given back `n`
 * at a time (Java's Semaphore): `acquireSync()` blocks (workers, Node's main
 * thread), `acquire()` never does. Robust: the permits a thread holds when it
 * ends (terminated, `process.exit()`, an uncaught exception, its script
 * ending) come back. Permits go back through the instance that took them.
 * Not FIFO: every release wakes every waiter, and a request for many may
 * wait while requests for few keep taking what is free. Each thread builds
 * its own instance over the same slots (`Semaphore.from`).
 */
export class Semaphore {
  /** The bytes of SharedArrayBuffer a semaphore takes (three Int32s). */
  static readonly BYTES: 12;
  /**
   * A new instance over the slots of a posted one (`{ sab, i32a, index }`);
   * writes nothing, holds nothing.
   *
   * @throws {TypeError} `value` has neither `i32a` nor `sab`.
   */
  static from(value: AsyncLockSource, options?: PrimitiveOptions): Semaphore;
  /**
   * `new Semaphore(permits)` (a fresh 12-byte SharedArrayBuffer),
   * `new Semaphore(permits, sab)`, `new Semaphore(permits, sab, index)`,
   * `new Semaphore(permits, int32Array, index)` (three Int32s from `index`):
   * writes `permits`, all free.
   *
   * @throws {TypeError} `permits` is not a number; `sab` is not a SharedArrayBuffer or an Int32Array over one.
   * @throws {RangeError} `permits` is not an integer from 0 to 2^31 - 1; `index` leaves no room for three Int32s.
   */
  constructor(permits: number, sab?: SharedArrayBuffer | Int32Array, index?: number, options?: PrimitiveOptions);
  constructor(permits: number, options: PrimitiveOptions);

  readonly sab: SharedArrayBuffer;
  readonly i32a: Int32Array;
  readonly index: number;
  /** The name given at construction (or by the posted instance); absent when none was. */
  readonly name?: string;
  /** The permits free now (a snapshot). */
  readonly available: number;
  /** The permits the semaphore was made with. */
  readonly permits: number;
  /** The permits this instance holds now. */
  readonly held: number;

  /**
   * Takes `n` (default 1) permits if that many are free; never waits.
   *
   * @throws {RangeError} `n` is not an integer from 0 to the semaphore's permits.
   */
  tryAcquire(n?: number): boolean;
  /** Blocks until `n` (default 1) permits are free and takes them (true), or `timeout` ms passed (false). */
  acquireSync(n?: number, timeout?: number): boolean;
  /**
   * `acquireSync(n, timeout)` returning a release function (for `using`).
   *
   * @throws {Error} code `'ERR_SEMAPHORE_TIMEOUT'`.
   */
  acquireGuard(n?: number, timeout?: number): SemaphoreReleaser;
  /**
   * Takes `n` (default 1) permits without blocking; resolves with a release
   * function. Rejects with code `'ERR_SEMAPHORE_TIMEOUT'` after
   * `options.timeout` ms, or with `options.signal`'s reason, having taken
   * nothing and left nothing queued.
   */
  acquire(n?: number, options?: SemaphoreOptions): Promise<SemaphoreReleaser>;
  /** Runs `f` holding `n` (default 1) permits; gives them back however f ends. */
  runExclusive<T>(f: () => T | PromiseLike<T>, n?: number, options?: SemaphoreOptions): Promise<T>;
  /**
   * Gives back `n` (default 1) permits this instance holds, waking the waiters.
   *
   * @throws {Error} code `'ERR_SEMAPHORE_NOT_HELD'`: it holds fewer (nothing given back).
   */
  release(n?: number): void;
}

/**
 * A signalling semaphore's async wait bounds: as `AsyncLockOptions`, but a
 * timeout rejects with code `'ERR_SIGNAL_SEMAPHORE_TIMEOUT'`.
 */
export type SignalSemaphoreOptions = AsyncLockOptions;

/**
 * A count in two Int32s of a SharedArrayBuffer that any thread may add to
 * (`release`), whether or not it took anything, and that threads take from,
 * `n` at a time (Java's Semaphore, C++20's counting_semaphore, POSIX
 * `sem_t`): a producer's "one more item". `acquireSync()` blocks (workers,
 * Node's main thread), `acquire()` never does. A permit taken is consumed:
 * a thread that ends after taking gives nothing back, while one that ends
 * waiting leaves no trace of its wait. Not FIFO between threads: every
 * release wakes every waiter. Each thread builds its own instance over the
 * same slots (`SignalSemaphore.from`). For permits that go back through
 * the instance that took them, and come back when their holder dies, use
 * `Semaphore`.
 */
export class SignalSemaphore {
  /** The bytes of SharedArrayBuffer a signalling semaphore takes (two Int32s). */
  static readonly BYTES: 8;
  /**
   * A new instance over the slots of a posted one (`{ sab, i32a, index }`);
   * writes nothing.
   *
   * @throws {TypeError} `value` has neither `i32a` nor `sab`.
   */
  static from(value: AsyncLockSource, options?: PrimitiveOptions): SignalSemaphore;
  /**
   * `new SignalSemaphore()` (0, in a fresh 8-byte SharedArrayBuffer),
   * `new SignalSemaphore(initial)`, `new SignalSemaphore(initial, sab)`,
   * `new SignalSemaphore(initial, sab, index)`,
   * `new SignalSemaphore(initial, int32Array, index)` (two Int32s from
   * `index`): writes `initial` (default 0) permits free.
   *
   * @throws {TypeError} `initial` is not a number; `sab` is not a SharedArrayBuffer or an Int32Array over one.
   * @throws {RangeError} `initial` is not an integer from 0 to 2^31 - 1; `index` leaves no room for two Int32s.
   */
  constructor(initial?: number, sab?: SharedArrayBuffer | Int32Array, index?: number, options?: PrimitiveOptions);
  constructor(initial: number, options: PrimitiveOptions);

  readonly sab: SharedArrayBuffer;
  readonly i32a: Int32Array;
  readonly index: number;
  /** The name given at construction (or by the posted instance); absent when none was. */
  readonly name?: string;
  /** The permits free now (a snapshot). */
  readonly available: number;

  /**
   * Adds `n` (default 1) permits, from any thread and any instance, and
   * wakes the waiters.
   *
   * @throws {RangeError} `n` is not an integer from 0 to 2^31 - 1; code
   * `'ERR_SIGNAL_SEMAPHORE_OVERFLOW'`: the count would go past 2^31 - 1 (nothing added).
   */
  release(n?: number): void;
  /**
   * Takes `n` (default 1) permits if that many are free; never waits.
   *
   * @throws {RangeError} `n` is not an integer from 0 to 2^31 - 1.
   */
  tryAcquire(n?: number): boolean;
  /** Blocks until `n` (default 1) permits are free and takes them (true), or `timeout` ms passed (false). */
  acquireSync(n?: number, timeout?: number): boolean;
  /**
   * Takes `n` (default 1) permits without blocking; resolves once taken.
   * Rejects with code `'ERR_SIGNAL_SEMAPHORE_TIMEOUT'` after
   * `options.timeout` ms, or with `options.signal`'s reason, having taken
   * nothing and left nothing queued.
   */
  acquire(n?: number, options?: SignalSemaphoreOptions): Promise<void>;
}

/** A barrier's async wait bounds: `timeout` and `signal`, as `AsyncLockOptions`. */
export type BarrierOptions = Omit<AsyncLockOptions, 'priority'>;

/**
 * N parties meet, then all go on, generation after generation (Java's
 * CyclicBarrier), in three Int32s of a SharedArrayBuffer: `arriveAndWait()`
 * blocks (workers, Node's main thread), `arriveAndWaitAsync()` never does. A
 * party that times out, aborts or ends while it waits breaks the generation:
 * every other party gets `ERR_BARRIER_BROKEN`, and so does every arrival
 * until `reset()`. Each thread builds its own instance over the same slots
 * (`Barrier.from`).
 */
export class Barrier {
  /** The bytes of SharedArrayBuffer a barrier takes (three Int32s). */
  static readonly BYTES: 12;
  /**
   * A new instance over the slots of a posted one (`{ sab, i32a, index }`);
   * writes nothing.
   *
   * @throws {TypeError} `value` has neither `i32a` nor `sab`.
   */
  static from(value: AsyncLockSource, options?: PrimitiveOptions): Barrier;
  /**
   * `new Barrier(parties)` (a fresh 12-byte SharedArrayBuffer),
   * `new Barrier(parties, sab)`, `new Barrier(parties, sab, index)`,
   * `new Barrier(parties, int32Array, index)` (three Int32s from `index`):
   * writes a fresh barrier.
   *
   * @throws {TypeError} `parties` is not a number; `sab` is not a SharedArrayBuffer or an Int32Array over one.
   * @throws {RangeError} `parties` is not an integer from 1 to 32767; `index` leaves no room for three Int32s.
   */
  constructor(parties: number, sab?: SharedArrayBuffer | Int32Array, index?: number, options?: PrimitiveOptions);
  constructor(parties: number, options: PrimitiveOptions);

  readonly sab: SharedArrayBuffer;
  readonly i32a: Int32Array;
  readonly index: number;
  /** The name given at construction (or by the posted instance); absent when none was. */
  readonly name?: string;
  /** The parties it was made for. */
  readonly parties: number;
  /** How many parties wait in the current generation now (a snapshot). */
  readonly waiting: number;
  /** Whether it is broken (until `reset()`). */
  readonly broken: boolean;

  /**
   * Arrives and blocks until every party has; returns the arrival index (0
   * first, `parties - 1` for the one that opened the generation).
   *
   * @throws {Error} code `'ERR_BARRIER_BROKEN'`: the barrier is or became broken.
   * @throws {Error} code `'ERR_BARRIER_TIMEOUT'`: `timeout` ms passed (the barrier is now broken for the others).
   */
  arriveAndWait(timeout?: number): number;
  /**
   * `arriveAndWait()` without blocking: resolves with the arrival index;
   * rejects with `ERR_BARRIER_BROKEN`, with `ERR_BARRIER_TIMEOUT` after
   * `options.timeout` ms or with `options.signal`'s reason (both breaking the
   * generation for the others, unless it completed first).
   */
  arriveAndWaitAsync(options?: BarrierOptions): Promise<number>;
  /** Breaks the current generation (its waiting parties get `ERR_BARRIER_BROKEN`) and starts a fresh one. */
  reset(): void;
}

/** An RwLock's async wait bounds: as `AsyncLockOptions`. */
export type RwLockOptions = AsyncLockOptions;

/** A release function of a read or of the write lock (idempotent), disposable. */
export interface RwLockReleaser {
  (): void;
  /** What it gives back: a read, or the write lock. */
  readonly mode: 'read' | 'write';
  /**
   * Whether the hold was taken from a lock whose last writer's thread ended
   * holding it (`rwlock.abandoned` when it was taken): what it guards may be
   * half-written.
   */
  readonly abandoned: boolean;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Many readers or one writer, in two Int32s of a SharedArrayBuffer
 * (parking_lot's RwLock, Java's ReentrantReadWriteLock): `readSync()` and
 * `writeSync()` block (workers, Node's main thread), `read()`, `write()`,
 * `runShared()` and `runExclusive()` never do. Robust: the reads and the
 * write lock a thread holds when it ends (terminated, `process.exit()`, an
 * uncaught exception, its script ending) are given back (a dead writer's
 * leaves the lock `abandoned` until the next writer releases it). A hold goes back
 * through the instance that took it. Writer-preferring: a waiting writer
 * holds new readers off, except an instance that holds a read already, which
 * takes another. Not FIFO: every release wakes every waiter. Two zero Int32s
 * are a free RwLock: each thread builds its own instance over the same slots
 * (`new RwLock(sab, index)` or `RwLock.from`).
 */
export class RwLock {
  /** The bytes of SharedArrayBuffer an RwLock takes (two Int32s). */
  static readonly BYTES: 8;
  /**
   * A new instance over the slots of a posted one (`{ sab, i32a, index }`);
   * writes nothing, holds nothing.
   *
   * @throws {TypeError} `value` has neither `i32a` nor `sab`.
   */
  static from(value: AsyncLockSource, options?: PrimitiveOptions): RwLock;
  /**
   * `new RwLock()` (a fresh 8-byte SharedArrayBuffer), `new RwLock(sab)`,
   * `new RwLock(sab, index)`, `new RwLock(int32Array, index)` (two Int32s
   * from `index`, default 0). Writes nothing: the two Int32s must start at 0
   * (a free RwLock), so every thread may build its instance this way.
   *
   * @throws {TypeError} `sab` is not a SharedArrayBuffer or an Int32Array over one.
   * @throws {RangeError} `index` leaves no room for two Int32s.
   */
  constructor(sab?: SharedArrayBuffer | Int32Array, index?: number, options?: PrimitiveOptions);
  constructor(options: PrimitiveOptions);

  readonly sab: SharedArrayBuffer;
  readonly i32a: Int32Array;
  readonly index: number;
  /** The name given at construction (or by the posted instance); absent when none was. */
  readonly name?: string;
  /** How many reads are held now, by every thread (a snapshot). */
  readonly readers: number;
  /** Whether a writer holds the lock now (a snapshot). */
  readonly writeLocked: boolean;
  /** How many reads this instance holds. */
  readonly readsHeld: number;
  /** Whether this instance holds the write lock. */
  readonly writeHeld: boolean;
  /**
   * Whether the last writer's thread ended holding the write lock (it was
   * given back), and no writer has released the lock since: what it guards
   * may be half-written. A snapshot, stable while this thread holds a read
   * or the write lock; the next writer's release clears it (repair first).
   */
  readonly abandoned: boolean;

  /**
   * Takes a read if no writer holds the lock or waits for it; never waits.
   *
   * @throws {RangeError} code `'ERR_RWLOCK_TOO_MANY_READERS'`: 2^20 − 1 reads are held already.
   */
  tryRead(): boolean;
  /** Takes the write lock if nobody holds the lock; never waits. */
  tryWrite(): boolean;
  /**
   * Blocks until it can take a read (as `tryRead()`, but past this
   * instance's own waiting writes, and past all waiting writers when it
   * holds a read already) and takes it (true), or `timeout` ms passed (false).
   *
   * @throws {Error} code `'ERR_RWLOCK_DEADLOCK'`: this instance holds the write lock (with or without a timeout).
   * @throws {RangeError} code `'ERR_RWLOCK_TOO_MANY_READERS'`: 2^20 − 1 reads are held already.
   */
  readSync(timeout?: number): boolean;
  /**
   * Blocks until nobody holds the lock and takes it for writing (true), or
   * `timeout` ms passed (false). While it waits, new readers wait behind it.
   *
   * @throws {Error} code `'ERR_RWLOCK_DEADLOCK'`: this instance holds a read or the write lock (with or without a timeout).
   */
  writeSync(timeout?: number): boolean;
  /**
   * `readSync(timeout)` returning a release function (for `using`).
   *
   * @throws {Error} code `'ERR_RWLOCK_TIMEOUT'`; code `'ERR_RWLOCK_DEADLOCK'` as `readSync()`.
   * @throws {RangeError} code `'ERR_RWLOCK_TOO_MANY_READERS'`.
   */
  readGuard(timeout?: number): RwLockReleaser;
  /**
   * `writeSync(timeout)` returning a release function (for `using`).
   *
   * @throws {Error} code `'ERR_RWLOCK_TIMEOUT'`; code `'ERR_RWLOCK_DEADLOCK'` as `writeSync()`.
   */
  writeGuard(timeout?: number): RwLockReleaser;
  /**
   * Takes a read without blocking; resolves with a release function. Rejects
   * with code `'ERR_RWLOCK_TIMEOUT'` after `options.timeout` ms, or with
   * `options.signal`'s reason, having taken nothing and left nothing queued;
   * with a `RangeError` of code `'ERR_RWLOCK_TOO_MANY_READERS'`.
   */
  read(options?: RwLockOptions): Promise<RwLockReleaser>;
  /**
   * Takes the write lock without blocking; resolves with a release function.
   * Rejects as `read()`. While it waits, new readers wait behind it.
   */
  write(options?: RwLockOptions): Promise<RwLockReleaser>;
  /** Runs `f` holding a read, without blocking; releases it however f ends. Rejects as `read()`. */
  runShared<T>(f: () => T | PromiseLike<T>, options?: RwLockOptions): Promise<T>;
  /** Runs `f` holding the write lock, without blocking; releases it however f ends. Rejects as `write()`. */
  runExclusive<T>(f: () => T | PromiseLike<T>, options?: RwLockOptions): Promise<T>;
  /**
   * Gives back one read this instance holds, waking the waiters if no read is left held.
   *
   * @throws {Error} code `'ERR_RWLOCK_NOT_HELD'`: it holds none (nothing given back).
   */
  releaseRead(): void;
  /**
   * Gives back the write lock this instance holds, waking the waiters.
   *
   * @throws {Error} code `'ERR_RWLOCK_NOT_HELD'`: it does not hold it (nothing given back).
   */
  releaseWrite(): void;
}

/**
 * The mutex of the V8 blog post "Atomics.wait, Atomics.notify,
 * Atomics.waitAsync", in one Int32 slot of a SharedArrayBuffer, robust: a
 * thread that ends while holding it gives it back, and the next holder is
 * told (`abandoned`). The slot holds 0 when free, 1 when free after its
 * holder's thread ended, and the holder's threadId + 1, shifted left by one (| 1 when threads
 * may wait) when held (docs/async-lock.md). `lock()` blocks (workers, and
 * Node's main thread); `executeLocked`/`acquire` never block. Each thread
 * builds its own instance over the same slot (`AsyncLock.from`). Not
 * reentrant; a waiter that has waited 0.5 ms gets the lock next.
 */
export class AsyncLock {
  /** The slot `new AsyncLock(sab)` uses. */
  static readonly INDEX: 0;
  static readonly UNLOCKED: 0;
  /** The post's value for a held lock; the slot now holds (threadId + 1) << 1. */
  static readonly LOCKED: 1;
  /** The post's value for a contended lock; the slot now holds (threadId + 1) << 1 | 1. */
  static readonly CONTENDED: 2;
  /** The slot of a free lock whose last holder's thread ended holding it. */
  static readonly ABANDONED: 1;
  /** The bytes of SharedArrayBuffer a lock takes. */
  static readonly BYTES: 4;

  /**
   * A new instance over the same slot, e.g. in a worker from a posted lock:
   * `AsyncLock.from(workerData.lock)`. It does not hold the lock.
   *
   * @throws {TypeError} `value` has neither `i32a` nor `sab`.
   */
  static from(value: AsyncLockSource, options?: PrimitiveOptions): AsyncLock;

  /**
   * `new AsyncLock(sab)` (slot `AsyncLock.INDEX`), `new AsyncLock(int32Array,
   * index)` or `new AsyncLock(sab, index)` (many locks in one buffer), or
   * `new AsyncLock()` (a fresh 4-byte SharedArrayBuffer). The slot must
   * start at 0.
   *
   * @throws {TypeError} `sab` is not a SharedArrayBuffer or an Int32Array over one.
   * @throws {RangeError} `index` is not an integer slot of the array.
   */
  constructor(sab?: SharedArrayBuffer | Int32Array, index?: number, options?: PrimitiveOptions);
  constructor(options: PrimitiveOptions);

  readonly sab: SharedArrayBuffer;
  readonly i32a: Int32Array;
  readonly index: number;
  /** The name given at construction (or by the posted instance); absent when none was. */
  readonly name?: string;

  /**
   * Blocks until this thread holds the lock; with `timeout` (ms), returns
   * false if it could not within it.
   *
   * @throws {Error} code `'ERR_ASYNC_LOCK_DEADLOCK'`: this instance holds it
   * already, or (without a timeout) another instance of this thread does.
   */
  lock(timeout?: number): boolean;
  /** Takes the lock if free, without waiting. */
  tryLock(): boolean;
  /**
   * Releases the lock.
   *
   * @throws {Error} code `'ERR_ASYNC_LOCK_NOT_HELD'`: this instance does not hold it.
   */
  unlock(): void;
  /** `unlock()`, under async-mutex's name. */
  release(): void;
  /** Whether any thread holds the lock (a snapshot). */
  isLocked(): boolean;
  /**
   * The `threadId` (worker_threads) of the thread holding the lock, or null
   * if it is free (a snapshot, for debugging).
   */
  holder(): number | null;
  /**
   * True while this instance holds the lock and took it from a thread that
   * ended holding it: what the lock guards may be half updated. Only the
   * first holder after that thread is told; false once it unlocks.
   */
  readonly abandoned: boolean;
  /**
   * Runs `f` holding the lock, without blocking; resolves with its result,
   * always releasing first; rejects with f's error, a timeout or an abort.
   */
  executeLocked<T>(f: () => T | PromiseLike<T>, options?: AsyncLockOptions): Promise<T>;
  /** `executeLocked`, under async-mutex's name. */
  runExclusive<T>(f: () => T | PromiseLike<T>, options?: AsyncLockOptions): Promise<T>;
  /** Waits for the lock without blocking; resolves with its release function. */
  acquire(options?: AsyncLockOptions): Promise<AsyncLockReleaser>;
  /**
   * `lock(timeout)` returning a release function, for `using guard = lock.lockGuard()`.
   *
   * @throws {Error} code `'ERR_ASYNC_LOCK_TIMEOUT'`.
   */
  lockGuard(timeout?: number): AsyncLockReleaser;
  /** Resolves once the lock is seen free, without taking it. */
  waitForUnlock(options?: AsyncLockOptions): Promise<void>;
  /**
   * Frees the lock whoever holds it and wakes every waiter; returns whether
   * it was locked. Not needed when a holder's thread ends (the lock is given
   * back then); breaks mutual exclusion if a live thread holds it.
   */
  forceUnlock(): boolean;
}

/** A constructor's or `from`'s last argument. */
export interface PrimitiveOptions {
  /** Shown by query(), report() and util.inspect; posted with the instance. */
  name?: string;
}

/** A thread's hold of a primitive, in a query() entry. */
export type PrimitiveHolder =
  | { threadId: number; mode: 'exclusive' | 'write' }
  | { threadId: number; mode: 'read'; reads: number }
  | { threadId: number; permits: number };

/** A take that waits now, in a query() entry. */
export interface PrimitiveWaiter {
  threadId: number;
  /** A blocking take (the thread sleeps), or an async one. */
  blocking: boolean;
  /** What it asked for: AsyncLock 'exclusive', RwLock 'read' or 'write'. */
  mode?: 'exclusive' | 'read' | 'write';
  /** Semaphore: the permits it asked for. */
  permits?: number;
  /** When it started to wait (ms since the epoch), and for how long it has. */
  since: number;
  waitedMs: number;
}

/** One primitive in use, in query(). */
export interface PrimitiveEntry {
  kind: 'AsyncLock' | 'Semaphore' | 'SignalSemaphore' | 'RwLock' | 'Condition' | 'Barrier' | 'Latch';
  /** 'async-mutex' for that entry point's Semaphore. */
  package?: 'async-mutex';
  name: string | undefined;
  /** Its SharedArrayBuffer's number (the same in every thread while instances over it live), and the index. */
  buffer: number;
  index: number;
  state: Record<string, number | boolean>;
  /** An AsyncLock or RwLock write lock whose holder's thread ended holding it, not taken since. */
  abandoned: boolean;
  holders: PrimitiveHolder[];
  waiters: PrimitiveWaiter[];
  /** The threadIds with an instance over it. */
  threads: number[];
}

/** Every primitive of the package in use in any thread of the process, now. */
export function query(): { at: number; primitives: PrimitiveEntry[] };

/** query() (or `snapshot`) as text: a line per primitive and one per waiter. */
export function report(snapshot?: { at: number; primitives: PrimitiveEntry[] }): string;

/**
 * Deadlock detection on (default) or off, for every thread of the process
 * (also: ATOMICS_WAITASYNC_DEBUG=deadlocks). While on, a take that would
 * close a cycle of takes that can never end throws (blocking) or rejects
 * (async) with a DeadlockError; a Condition's re-take of its lock and a
 * take with a timeout, which are never failed, wait on after a process
 * warning (DeadlockWarning, code ATOMICS_WAITASYNC_DEADLOCK). Each cycle found is published on the
 * diagnostics_channel `atomics-waitasync:deadlock` as
 * `{ error: DeadlockError, waitsOn: boolean }`.
 */
export function detectDeadlocks(enabled?: boolean): void;

/**
 * Lock-order checks on (default) or off, for every thread of the process
 * (also: ATOMICS_WAITASYNC_DEBUG=lock-order): the first time two primitives
 * are taken in the inverse order of one seen before, a process warning
 * (LockOrderWarning, code ATOMICS_WAITASYNC_LOCK_ORDER).
 */
export function checkLockOrder(enabled?: boolean): void;

/** One link of a deadlock's cycle: a thread's wait, and who holds what it waits for. */
export interface DeadlockLink {
  threadId: number;
  blocking: boolean;
  waitsFor: { kind: PrimitiveEntry['kind']; name?: string; buffer: number; index: number };
  /** The thread holding it (undefined when `behind` says a waiting writer holds it off). */
  heldBy?: number;
  behind?: number;
  /** Where `heldBy` took it, if recorded. */
  stack?: string;
}

/** The error of a take that would close a cycle (code ERR_DEADLOCK). */
export interface DeadlockError extends Error {
  code: 'ERR_DEADLOCK';
  cycle: DeadlockLink[];
}
