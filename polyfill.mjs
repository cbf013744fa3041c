// ESM entry of atomics-waitasync/polyfill: the same module as the CommonJS
// one, so `import` and `require` install one polyfill.
import './polyfill.js';
