// atomics-waitasync/async-mutex: async-mutex 0.5's API, across threads.
// The interfaces and signatures are async-mutex's, plus `from` (an instance
// posted to a worker is rebuilt there with it) and the buffer each lives in.

export interface MutexInterface {
  acquire(priority?: number): Promise<MutexInterface.Releaser>;
  runExclusive<T>(callback: MutexInterface.Worker<T>, priority?: number): Promise<T>;
  waitForUnlock(priority?: number): Promise<void>;
  isLocked(): boolean;
  release(): void;
  cancel(): void;
}

export declare namespace MutexInterface {
  interface Releaser {
    (): void;
  }
  interface Worker<T> {
    (): Promise<T> | T;
  }
}

export interface SemaphoreInterface {
  acquire(weight?: number, priority?: number): Promise<[number, SemaphoreInterface.Releaser]>;
  runExclusive<T>(callback: SemaphoreInterface.Worker<T>, weight?: number, priority?: number): Promise<T>;
  waitForUnlock(weight?: number, priority?: number): Promise<void>;
  isLocked(): boolean;
  getValue(): number;
  setValue(value: number): void;
  release(weight?: number): void;
  cancel(): void;
}

export declare namespace SemaphoreInterface {
  interface Releaser {
    (): void;
  }
  interface Worker<T> {
    (value: number): Promise<T> | T;
  }
}

/** What postMessage copies of an instance, for `from` in another thread. */
export interface Posted {
  sab: SharedArrayBuffer;
  i32a: Int32Array;
  index: number;
}

/** A mutex in a SharedArrayBuffer (an AsyncLock): the same lock in every thread that has it. */
export declare class Mutex implements MutexInterface {
  /** A mutex in a fresh 4-byte SharedArrayBuffer; canceled takes reject with `cancelError` (default E_CANCELED). */
  constructor(cancelError?: Error);
  /** The Mutex over the lock of one posted to this thread (or an AsyncLock's slot). */
  static from(posted: Posted, cancelError?: Error): Mutex;
  readonly sab: SharedArrayBuffer;
  readonly i32a: Int32Array;
  readonly index: number;
  acquire(priority?: number): Promise<MutexInterface.Releaser>;
  runExclusive<T>(callback: MutexInterface.Worker<T>, priority?: number): Promise<T>;
  waitForUnlock(priority?: number): Promise<void>;
  isLocked(): boolean;
  /** Releases the lock if this instance holds it; does nothing otherwise. */
  release(): void;
  cancel(): void;
}

/** A signalling semaphore in a SharedArrayBuffer: the same count in every thread that has it. */
export declare class Semaphore implements SemaphoreInterface {
  /** A count of `value` (an Int32, may be negative) in a fresh 8-byte SharedArrayBuffer. */
  constructor(value: number, cancelError?: Error);
  /** The Semaphore over the count of one posted to this thread; writes nothing. */
  static from(posted: Posted, cancelError?: Error): Semaphore;
  readonly sab: SharedArrayBuffer;
  readonly i32a: Int32Array;
  readonly index: number;
  acquire(weight?: number, priority?: number): Promise<[number, SemaphoreInterface.Releaser]>;
  runExclusive<T>(callback: SemaphoreInterface.Worker<T>, weight?: number, priority?: number): Promise<T>;
  waitForUnlock(weight?: number, priority?: number): Promise<void>;
  isLocked(): boolean;
  getValue(): number;
  setValue(value: number): void;
  release(weight?: number): void;
  cancel(): void;
}

export declare function withTimeout(mutex: MutexInterface, timeout: number, timeoutError?: Error): MutexInterface;
export declare function withTimeout(semaphore: SemaphoreInterface, timeout: number, timeoutError?: Error): SemaphoreInterface;
export declare function tryAcquire(mutex: MutexInterface, alreadyAcquiredError?: Error): MutexInterface;
export declare function tryAcquire(semaphore: SemaphoreInterface, alreadyAcquiredError?: Error): SemaphoreInterface;

export declare const E_TIMEOUT: Error;
export declare const E_ALREADY_LOCKED: Error;
export declare const E_CANCELED: Error;
