// Type definitions for atomics-waitasync. Hand-written; checked by
// __test__/types (npm run test:types).

/** A typed array `wait`, `waitAsync` and `notify` accept. */
export type WaitableArray = Int32Array | BigInt64Array;

/** The synchronous results of `waitAsync`. */
export interface WaitAsyncSyncResult {
  async: false;
  value: 'not-equal' | 'timed-out';
}

/** The asynchronous result of `waitAsync`; the promise never rejects. */
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
export function waitAsync(typedArray: Int32Array, index: number, value: number, timeout?: number): WaitAsyncResult;
export function waitAsync(typedArray: BigInt64Array, index: number, value: bigint, timeout?: number): WaitAsyncResult;

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
