'use strict';
// A woken sync wait confirms that its "ok" reached JavaScript by writing 0
// into this thread's waitSeen word (lib/atomics.js `wait`); the binding
// passes on any wake-up left unconfirmed. If code that reached the binding
// detached the word's buffer (ArrayBuffer#transfer, Node 22+), the write
// did nothing: every later wait of that thread passed on a wake-up its
// caller had seen, and a notify for one woke two. The fixture runs under
// Node 24 (scripts/runtimes.js), in a child process.

const assert = require('assert');
const { spawnSync } = require('child_process');
const runtimes = require('../../scripts/runtimes');
const { root, fixture } = require('../helpers');

describe('a detached waitSeen word', function () {
  this.timeout(120000);

  it('a woken wait is still confirmed: its next wait passes nothing on (Node 24)', function () {
    if (!runtimes.supported()) this.skip();
    const node = runtimes.ensure('node24').path;
    const result = spawnSync(node, [fixture('wait-seen-detached.js')], { cwd: root, encoding: 'utf8', timeout: 60000 });
    assert.deepStrictEqual([result.status, result.signal], [0, null], result.stderr);
    assert.deepStrictEqual(JSON.parse(result.stdout), {
      detached: true,
      notified: 1,
      first: 'ok',
      next: 'timed-out',
      // The worker queued behind this thread is still waiting: the one
      // notify woke this thread only.
      sleeperStillQueued: 1,
      released: 1,
      sleeperSaw: 'ok',
    });
  });
});
