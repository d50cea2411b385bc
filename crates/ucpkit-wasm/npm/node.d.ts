// Node's entry (node.js) exports the browser module's API, ready to use:
// everything but its `init`, which node.js has already run.
export * from './web/ucpkit_wasm.js';
