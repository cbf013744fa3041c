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
