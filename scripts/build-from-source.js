#!/usr/bin/env node
'use strict';
// `npx atomics-waitasync-build`: builds the addon from source for a platform
// with no prebuilt binary (macOS, Windows, musl, other arches). Needs Rust
// and cargo. cargo works in a temporary folder that is removed afterwards:
// only atomics-waitasync.node stays in the package folder, and binding.js
// loads it before any prebuilt binary.
//
//   npx atomics-waitasync-build           release build
//   npx atomics-waitasync-build --debug   debug build

require('./build').main(['--temp-target'].concat(process.argv.slice(2)));
