'use strict';
// A cyclic barrier written by hand on the runtime's own Atomics (wait,
// waitAsync, notify), as a user without this package would write it: the
// yardstick of benchmark/lock-family.js's barrier rows ("native"). Two
// Int32s from `index`: arrivals in this generation, the generation. (No
// timeouts, no broken state: a party that never comes strands the rest.)

class NativeBarrier {
  constructor(sab, index, parties) {
    this.i32 = new Int32Array(sab);
    this.index = index;
    this.parties = parties;
  }

  arriveAndWait() {
    const { i32, index } = this;
    const generation = Atomics.load(i32, index + 1);
    if (Atomics.add(i32, index, 1) + 1 === this.parties) {
      Atomics.store(i32, index, 0);
      Atomics.add(i32, index + 1, 1);
      Atomics.notify(i32, index + 1);
      return;
    }
    while (Atomics.load(i32, index + 1) === generation) Atomics.wait(i32, index + 1, generation);
  }
}

module.exports = { NativeBarrier };
