'use strict';
// lib/diagnostics.js keeps, per kind, whether anyone listens (the one
// check a take or a traced call pays when nobody does) up to date as
// subscribers come and go: subscribed before the kind's channels were
// first looked up or after, through channel.subscribe, dc.subscribe,
// tracingChannel.subscribe or a bound store, and with two copies of the
// package watching the same channels. Each test uses kinds of its own,
// and fresh copies of the module.

const assert = require('assert');
const dc = require('diagnostics_channel');
const { hasTracing } = require('../fixtures/diagnostics');

const modulePath = require.resolve('../../lib/diagnostics.js');
/** A copy of lib/diagnostics.js of its own (another copy of the package, as far as it knows). */
function freshCopy() {
  const cached = require.cache[modulePath];
  delete require.cache[modulePath];
  try {
    return require(modulePath);
  } finally {
    if (cached) require.cache[modulePath] = cached;
  }
}

let unique = 0;
const kindName = () => `Test${process.pid}x${++unique}`;

describe('diagnostics: subscribers are seen whenever they come', function () {
  it('a subscriber that came before the kind was first looked up', () => {
    const d = freshCopy();
    const name = kindName();
    const seen = [];
    const channel = dc.channel(`atomics-waitasync:${name}:wait:start`);
    const subscriber = (message) => seen.push(message);
    channel.subscribe(subscriber);
    try {
      const kind = d.createKind(name);
      const token = d.waitStart('instance', kind, { lock: true }, false);
      assert.notStrictEqual(token, undefined);
      d.waitEnd(token, 'taken');
      assert.strictEqual(seen.length, 1);
      assert.strictEqual(seen[0].kind, name);
      assert.strictEqual(seen[0].outcome, 'taken');
    } finally {
      channel.unsubscribe(subscriber);
    }
  });

  it('subscribers that come and go after: the kind\'s flag follows them, and nobody listening means no token', () => {
    const d = freshCopy();
    const name = kindName();
    const kind = d.createKind(name);
    assert.strictEqual(d.waitStart('instance', kind, {}, true), undefined);
    assert.strictEqual(kind.waits, false);
    const end = dc.channel(`atomics-waitasync:${name}:wait:end`);
    const ends = [];
    const onEnd = (message) => ends.push(message.outcome);
    end.subscribe(onEnd);
    assert.strictEqual(kind.waits, true);
    d.waitEnd(d.waitStart('instance', kind, {}, true), 'timeout');
    assert.deepStrictEqual(ends, ['timeout']);
    end.unsubscribe(onEnd);
    assert.strictEqual(kind.waits, false);
    if (typeof dc.subscribe === 'function') {
      dc.subscribe(`atomics-waitasync:${name}:wait:start`, onEnd);
      assert.strictEqual(kind.waits, true);
      dc.unsubscribe(`atomics-waitasync:${name}:wait:start`, onEnd);
      assert.strictEqual(kind.waits, false);
    }
    assert.strictEqual(d.waitStart('instance', kind, {}, true), undefined);
  });

  it('tracing: any of the five events, and a store bound to start', function () {
    if (!hasTracing) this.skip();
    const d = freshCopy();
    const name = kindName();
    const kind = d.createKind(name);
    assert.strictEqual(d.traced(kind, 'run', 'instance', 'm', {}, async () => 1) instanceof Promise, true);
    assert.strictEqual(d.tracing(kind, 'acquire'), false); // (an async take's look: each group is made at its first use)
    assert.deepStrictEqual([kind.run, kind.acquire], [false, false]);
    const tracing = dc.tracingChannel(`atomics-waitasync:${name}:acquire`);
    for (const event of ['start', 'end', 'asyncStart', 'asyncEnd', 'error']) {
      const handlers = { [event]: () => {} };
      tracing.subscribe(handlers);
      assert.deepStrictEqual([kind.run, kind.acquire], [false, true], event);
      tracing.unsubscribe(handlers);
      assert.deepStrictEqual([kind.run, kind.acquire], [false, false], event);
    }
    if (typeof tracing.start.bindStore === 'function') {
      const { AsyncLocalStorage } = require('async_hooks');
      const store = new AsyncLocalStorage();
      tracing.start.bindStore(store, (context) => context.method);
      assert.strictEqual(kind.acquire, true);
      tracing.start.unbindStore(store);
      assert.strictEqual(kind.acquire, false);
    }
  });

  it('each group of a kind\'s channels is made at its first use: subscribers that came before it are heard', () => {
    const d = freshCopy();
    const name = kindName();
    const kind = d.createKind(name);
    // The run tracing channel first (an executeLocked), where it exists; the waits not yet.
    if (hasTracing) {
      assert.strictEqual(d.tracing(kind, 'run'), false);
      assert.strictEqual(kind.run, false);
    }
    assert.deepStrictEqual([kind.waits, kind.acquire], [true, true]);
    const seen = [];
    const subscriber = (message) => seen.push(message.outcome);
    const end = dc.channel(`atomics-waitasync:${name}:wait:end`);
    end.subscribe(subscriber);
    try {
      d.waitEnd(d.waitStart('instance', kind, { lock: true }, true), 'taken');
      assert.deepStrictEqual(seen, ['taken']);
      assert.strictEqual(kind.waits, true);
    } finally {
      end.unsubscribe(subscriber);
    }
    assert.strictEqual(kind.waits, false);
    const abandoned = dc.channel(`atomics-waitasync:${name}:abandoned`);
    const lost = [];
    const onAbandoned = (message) => lost.push(message.kind);
    abandoned.subscribe(onAbandoned);
    try {
      d.abandoned('instance', kind);
      assert.deepStrictEqual(lost, [name]);
    } finally {
      abandoned.unsubscribe(onAbandoned);
    }
  });

  it('two copies watching the same channels both see a subscriber', () => {
    const one = freshCopy();
    const two = freshCopy();
    const name = kindName();
    const a = one.createKind(name);
    const b = two.createKind(name);
    one.waitStart('instance', a, {}, false);
    two.waitStart('instance', b, {}, false);
    assert.deepStrictEqual([a.waits, b.waits], [false, false]);
    const channel = dc.channel(`atomics-waitasync:${name}:wait:start`);
    const subscriber = () => {};
    channel.subscribe(subscriber);
    assert.deepStrictEqual([a.waits, b.waits], [true, true]);
    assert.strictEqual(channel.hasSubscribers, true);
    channel.unsubscribe(subscriber);
    assert.deepStrictEqual([a.waits, b.waits], [false, false]);
    assert.strictEqual(channel.hasSubscribers, false);
  });
});
