'use strict';
// Mutual exclusion, exactly, while holders are terminated at random points
// of their critical sections: 4 workers blocking in lock() and the main
// thread in executeLocked() run the same critical section, a two-step
// update of shared data, until the sections add up to the target; every
// few milliseconds a random worker is terminated (wherever it is: in the
// section, queued, or between two) and a new one takes its place.
//
// The section: inside = who; a += 1; done[who] += 1; b += 1; inside = 0.
// A holder that took the lock from a live one must find the data whole
// (inside 0, a === b); one that took it from a dead one (it is told:
// `abandoned`) repairs it from the per-thread counts, which only sections
// write: a = b = the sum of done. So at the end a === b === the sum of done,
// exactly, and no section ever saw another inside.

const assert = require('assert');
const { Worker } = require('worker_threads');
const { AsyncLock, waitersForTesting } = require('../..');
const { root, until } = require('../helpers');

// Slots of the shared Int32Array.
const A = 0;
const B = 1;
const INSIDE = 2;
const VIOLATIONS = 3;
const REPAIRS = 4;
const STOP = 5;
const DONE = 8; // done[who] at DONE + who; who 0 is the main thread
const MAX_THREADS = 4096;

const TARGET = 1000000; // sections in all
const WORKERS = 4;
const TERMINATIONS = 60; // at least

// The section, as source, shared by the workers and the main thread.
const sectionSource = `
  function section(lock, data, who) {
    if (lock.abandoned) {
      let sum = 0;
      for (let i = 0; i < ${MAX_THREADS}; i++) sum += data[${DONE} + i];
      data[${A}] = sum;
      data[${B}] = sum;
      data[${INSIDE}] = 0;
      Atomics.add(data, ${REPAIRS}, 1);
    } else if (data[${INSIDE}] !== 0 || data[${A}] !== data[${B}]) {
      Atomics.add(data, ${VIOLATIONS}, 1);
    }
    data[${INSIDE}] = who;
    data[${A}] = data[${A}] + 1;
    data[${DONE} + who] = data[${DONE} + who] + 1;
    data[${B}] = data[${B}] + 1;
    data[${INSIDE}] = 0;
  }
`;
// eslint-disable-next-line no-new-func
const section = new Function(`${sectionSource}; return section;`)();

function startWorker(lock, data, who) {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('worker_threads');
    const { AsyncLock } = require(workerData.root);
    ${sectionSource}
    const lock = AsyncLock.from(workerData.lock);
    const data = new Int32Array(workerData.data);
    const who = workerData.who;
    parentPort.postMessage('ready');
    while (Atomics.load(data, ${STOP}) === 0) {
      lock.lock();
      section(lock, data, who);
      lock.unlock();
    }
  `,
    { eval: true, workerData: { root, lock, data: data.buffer, who } }
  );
  const ready = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { worker, ready };
}

describe('AsyncLock under load with holders terminated along the way', function () {
  this.timeout(300000);

  it(`${TARGET.toLocaleString('en')} sections from ${WORKERS} workers and the main thread stay exact, whatever point a terminated holder stopped at`, async () => {
    const data = new Int32Array(new SharedArrayBuffer(4 * (DONE + MAX_THREADS)));
    const lock = new AsyncLock();
    let nextWho = 1;
    const running = [];
    const start = async () => {
      const w = startWorker(lock, data, nextWho++);
      running.push(w);
      await w.ready;
    };
    for (let i = 0; i < WORKERS; i++) await start();

    // The main thread's sections, one after the other, without blocking.
    let mainSections = 0;
    const mainLoop = (async () => {
      while (Atomics.load(data, STOP) === 0) {
        await lock.executeLocked(() => section(lock, data, 0));
        mainSections++;
      }
    })();

    // Terminate a random worker every 1-5 ms until the target is reached
    // and enough were.
    let terminated = 0;
    while (Atomics.load(data, A) < TARGET || terminated < TERMINATIONS) {
      await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 4));
      if (nextWho >= MAX_THREADS - 1) break;
      const victim = running.splice(Math.floor(Math.random() * running.length), 1)[0];
      await victim.worker.terminate();
      terminated++;
      await start();
    }
    Atomics.store(data, STOP, 1);
    await Promise.all(running.map((w) => w.worker.terminate()));
    await mainLoop;

    // The last holder may have been terminated in its section: take the
    // lock once more, repairing if told.
    await lock.executeLocked(() => section(lock, data, 0));
    let sum = 0;
    for (let i = 0; i < MAX_THREADS; i++) sum += data[DONE + i];
    assert.strictEqual(data[VIOLATIONS], 0, 'a section found another inside, or the data half-updated, unannounced');
    assert.deepStrictEqual([data[A], data[B], data[INSIDE]], [sum, sum, 0], 'the data add up exactly');
    assert.ok(data[A] >= TARGET, `${data[A]} sections`);
    assert.ok(terminated >= TERMINATIONS, `${terminated} workers terminated`);
    assert.ok(data[REPAIRS] > 0, 'some holders died holding the lock (else this tested nothing)');
    assert.ok(mainSections > 0, 'the main thread got the lock too');
    assert.strictEqual(lock.isLocked(), false);
    await until(() => waitersForTesting(lock.i32a, 0).registry === 0, 'no waiter left');
    // eslint-disable-next-line no-console
    console.log(
      `      ${data[A]} sections (main ${mainSections}), ${terminated} workers terminated, ${data[REPAIRS]} abandoned and repaired`
    );
  });
});
