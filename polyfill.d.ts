// atomics-waitasync/polyfill: importing it installs Atomics.waitAsync, wait
// and notify where Atomics.waitAsync is missing. It exports nothing; it
// declares `Atomics.waitAsync` for projects whose TypeScript `lib` is older
// than es2024 (with es2024 the two declarations merge as equal overloads).
import type { WaitAsyncResult } from './index';

declare global {
  interface Atomics {
    waitAsync(typedArray: Int32Array, index: number, value: number, timeout?: number): WaitAsyncResult;
    waitAsync(typedArray: BigInt64Array, index: number, value: bigint, timeout?: number): WaitAsyncResult;
  }
}

export {};
