'use strict';
// Runs the suite against the forced polyfill. scripts/test-matrix.js starts
// mocha as
//
//   ATOMICS_WAITASYNC_TEST_POLYFILL=force node -r ./__test__/setup-polyfill.js node_modules/mocha/bin/mocha.js
//
// so this file runs before any spec, in the mocha process and in every worker
// that inherits process.execArgv (the default), and puts the package's
// waitAsync, wait and notify on Atomics there, replacing native ones.
// Child processes started by specs do not get it (they have their own
// execArgv), but they see the variable: a spec that needs to know the mode
// reads process.env.ATOMICS_WAITASYNC_TEST_POLYFILL === 'force'. Loaded
// without the variable, it does nothing.

if (process.env.ATOMICS_WAITASYNC_TEST_POLYFILL === 'force') {
  const { active } = require('..').install({ force: true });
  if (!active) throw new Error('setup-polyfill: install({ force: true }) did not take effect');
}
