'use strict';
// A reader-writer lock written by hand on the runtime's own Atomics (wait,
// waitAsync, notify), as a user without this package would write it: the
// yardstick of benchmark/lock-family.js's rwlock rows ("native") and of
// benchmark/instructions/rwlock-uncontended.js. Two Int32s from `index`:
// the state (-1: a writer holds it; n >= 0: n readers hold it), waiters
// (threads about to wait or waiting: a release that may let one go wakes
// them all when there are any). It prefers readers (a stream of readers
// can keep a writer waiting), and has no timeouts and no robustness: a
// thread that ends holding it strands the others.

const WRITER = -1;

class NativeRwLock {
  constructor(sab, index) {
    this.i32 = new Int32Array(sab);
    this.index = index;
  }

  tryRead() {
    const { i32, index } = this;
    let seen = Atomics.load(i32, index);
    while (seen !== WRITER) {
      const was = Atomics.compareExchange(i32, index, seen, seen + 1);
      if (was === seen) return true;
      seen = was;
    }
    return false;
  }

  tryWrite() {
    return Atomics.compareExchange(this.i32, this.index, 0, WRITER) === 0;
  }

  read() {
    const { i32, index } = this;
    while (!this.tryRead()) {
      Atomics.add(i32, index + 1, 1);
      const seen = Atomics.load(i32, index);
      if (seen === WRITER) Atomics.wait(i32, index, seen);
      Atomics.sub(i32, index + 1, 1);
    }
  }

  write() {
    const { i32, index } = this;
    while (!this.tryWrite()) {
      Atomics.add(i32, index + 1, 1);
      const seen = Atomics.load(i32, index);
      if (seen !== 0) Atomics.wait(i32, index, seen);
      Atomics.sub(i32, index + 1, 1);
    }
  }

  async readAsync() {
    const { i32, index } = this;
    while (!this.tryRead()) {
      Atomics.add(i32, index + 1, 1);
      const seen = Atomics.load(i32, index);
      if (seen === WRITER) {
        const result = Atomics.waitAsync(i32, index, seen);
        if (result.async) await result.value;
      }
      Atomics.sub(i32, index + 1, 1);
    }
  }

  async writeAsync() {
    const { i32, index } = this;
    while (!this.tryWrite()) {
      Atomics.add(i32, index + 1, 1);
      const seen = Atomics.load(i32, index);
      if (seen !== 0) {
        const result = Atomics.waitAsync(i32, index, seen);
        if (result.async) await result.value;
      }
      Atomics.sub(i32, index + 1, 1);
    }
  }

  releaseRead() {
    const { i32, index } = this;
    // The last reader out may let a writer in.
    if (Atomics.sub(i32, index, 1) === 1 && Atomics.load(i32, index + 1) > 0) Atomics.notify(i32, index);
  }

  releaseWrite() {
    const { i32, index } = this;
    Atomics.store(i32, index, 0);
    if (Atomics.load(i32, index + 1) > 0) Atomics.notify(i32, index);
  }
}

module.exports = { NativeRwLock };
