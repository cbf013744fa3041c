'use strict';
// The AsyncLock of the V8 blog post "Atomics.wait, Atomics.notify,
// Atomics.waitAsync" (2020), on the runtime's native Atomics, as users paste
// it: the baseline of benchmark/lock-contention.js. Two changes, both needed
// to run it at all:
// - the post's lock() reads `self.i32a`; there is no `self` in a Node worker,
//   so it is `this.i32a` here;
// - the statics are assigned after the class (the post's `static INDEX = 0`
//   fields need Node 12+ syntax we avoid in benchmark code for Node 12).

class AsyncLock {
  constructor(sab) {
    this.sab = sab;
    this.i32a = new Int32Array(sab);
  }

  lock() {
    while (true) {
      const oldValue = Atomics.compareExchange(this.i32a, AsyncLock.INDEX,
        /* old value >>> */ AsyncLock.UNLOCKED,
        /* new value >>> */ AsyncLock.LOCKED);
      if (oldValue == AsyncLock.UNLOCKED) {
        return;
      }
      Atomics.wait(this.i32a, AsyncLock.INDEX,
        AsyncLock.LOCKED); // <<< expected value at start
    }
  }

  unlock() {
    const oldValue = Atomics.compareExchange(this.i32a, AsyncLock.INDEX,
      /* old value >>> */ AsyncLock.LOCKED,
      /* new value >>> */ AsyncLock.UNLOCKED);
    if (oldValue != AsyncLock.LOCKED) {
      throw new Error('Tried to unlock while not holding the mutex');
    }
    Atomics.notify(this.i32a, AsyncLock.INDEX, 1);
  }

  executeLocked(f) {
    const self = this;

    async function tryGetLock() {
      while (true) {
        const oldValue = Atomics.compareExchange(self.i32a, AsyncLock.INDEX,
          /* old value >>> */ AsyncLock.UNLOCKED,
          /* new value >>> */ AsyncLock.LOCKED);
        if (oldValue == AsyncLock.UNLOCKED) {
          f();
          self.unlock();
          return;
        }
        const result = Atomics.waitAsync(self.i32a, AsyncLock.INDEX,
          AsyncLock.LOCKED);
        //  ^ expected value at start
        await result.value;
      }
    }

    tryGetLock();
  }
}

AsyncLock.INDEX = 0;
AsyncLock.UNLOCKED = 0;
AsyncLock.LOCKED = 1;

module.exports = { AsyncLock };
