// The package's entry in Node: the same module as the browser's (web/),
// instantiated at import from the file beside it, so a Node user needs no
// `await init()` and the package carries the .wasm once.
import { readFileSync } from 'node:fs';
import { initSync } from './web/ucpkit_wasm.js';

initSync({ module: readFileSync(new URL('./web/ucpkit_wasm_bg.wasm', import.meta.url)) });

export * from './web/ucpkit_wasm.js';
