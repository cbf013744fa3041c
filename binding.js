'use strict';
// Loads the compiled addon. Kept apart from the API so that a missing build
// fails here, with one clear message.

const path = require('path');

const file = path.join(__dirname, 'atomics-waitasync.node');

function load() {
  try {
    return require(file);
  } catch (error) {
    if (error && error.code === 'MODULE_NOT_FOUND' && String(error.message).includes(file)) {
      const hint = new Error(
        'atomics-waitasync: the native addon is not built (' + file + ' is missing). ' +
          'It builds from source when the package is installed; with --ignore-scripts, ' +
          'build it with `npm rebuild atomics-waitasync` (needs Rust: https://rustup.rs), ' +
          'or `node scripts/build.js` in the package folder.'
      );
      hint.code = 'ERR_ATOMICS_WAITASYNC_NOT_BUILT';
      hint.cause = error;
      throw hint;
    }
    throw error;
  }
}

module.exports = load();
