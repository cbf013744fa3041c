'use strict';
// A counting semaphore written by hand on the runtime's own Atomics (wait,
// waitAsync, notify), as a user without this package would write it: the
// yardstick of benchmark/lock-family.js's semaphore rows ("native").
// Three Int32s from `index`: free permits, waiters (threads about to wait
// or waiting: a release wakes them all when there are any).

class NativeSemaphore {
  constructor(sab, index) {
    this.i32 = new Int32Array(sab);
    this.index = index;
  }

  tryAcquire(n = 1) {
    const { i32, index } = this;
    let seen = Atomics.load(i32, index);
    while (seen >= n) {
      const was = Atomics.compareExchange(i32, index, seen, seen - n);
      if (was === seen) return true;
      seen = was;
    }
    return false;
  }

  acquire(n = 1) {
    const { i32, index } = this;
    while (!this.tryAcquire(n)) {
      Atomics.add(i32, index + 1, 1);
      const seen = Atomics.load(i32, index);
      if (seen < n) Atomics.wait(i32, index, seen);
      Atomics.sub(i32, index + 1, 1);
    }
  }

  async acquireAsync(n = 1) {
    const { i32, index } = this;
    while (!this.tryAcquire(n)) {
      Atomics.add(i32, index + 1, 1);
      const seen = Atomics.load(i32, index);
      if (seen < n) {
        const result = Atomics.waitAsync(i32, index, seen);
        if (result.async) await result.value;
      }
      Atomics.sub(i32, index + 1, 1);
    }
  }

  release(n = 1) {
    const { i32, index } = this;
    Atomics.add(i32, index, n);
    if (Atomics.load(i32, index + 1) > 0) Atomics.notify(i32, index);
  }
}

module.exports = { NativeSemaphore };
