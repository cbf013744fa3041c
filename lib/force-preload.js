'use strict';
// What a worker loads first when the thread that started it had forced the
// install (lib/workers.js): the same forced install, in the worker.
require('..').install({ force: true });
