// The WebAssembly build gives the native CLI's answers: the same context,
// byte for byte, for each Node.js docs dev question at 2,000 tokens, and
// the same parse of every UCL snippet of the peer set. Needs the native
// binary (UCP_BIN) and, for contexts, the Node.js docs (UCP_NODE_CORPUS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { Store, parseUcl } from '../node.js';

const root = new URL('../../../../', import.meta.url).pathname;
const bin = process.env.UCP_BIN;
const corpus = process.env.UCP_NODE_CORPUS;

test('contexts are the native CLI\'s, byte for byte', { skip: !(bin && corpus) && 'needs UCP_BIN and UCP_NODE_CORPUS' }, () => {
  const store = new Store();
  const files = {};
  for (const name of readdirSync(corpus).filter((n) => n.endsWith('.md'))) {
    files[name] = readFileSync(join(corpus, name));
  }
  store.index('node', files);
  const dir = mkdtempSync(join(tmpdir(), 'ucp-wasm-'));
  try {
    const ucp = (...args) => execFileSync(bin, ['--store', join(dir, '.ucp'), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
    ucp('index', corpus, '--name', 'node');
    const questions = readFileSync(join(root, 'tests/data/eval/node-questions.jsonl'), 'utf8')
      .split('\n').filter(Boolean).map((line) => JSON.parse(line));
    assert.equal(questions.length, 60);
    const native = questions.map(({ question }) => ucp('context', question, '--doc', 'node', '--budget', '2000'));
    // Asked back to back, as a page would.
    const wasm = questions.map(({ question }) => store.context(question, { doc: 'node', budget: 2000 }).text);
    questions.forEach(({ question }, i) => assert.equal(wasm[i], native[i], question));
    // A document `ucp export` wrote answers the same once imported.
    const exported = ucp('--doc', 'node', 'export', '--format', 'json');
    assert.equal(store.importDocument(exported, 'exported'), 'exported');
    const { question } = questions[0];
    assert.equal(store.context(question, { doc: 'exported', budget: 2000 }).text, native[0]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('UCL snippets parse as natively', { skip: !bin && 'needs UCP_BIN' }, () => {
  const peer = join(root, 'tests/data/ucl-peer');
  let checked = 0;
  for (const folder of ['valid', 'invalid']) {
    for (const name of readdirSync(join(peer, folder)).filter((n) => n.endsWith('.ucl')).sort()) {
      const path = join(peer, folder, name);
      const wasm = parseUcl(readFileSync(path, 'utf8'));
      const native = spawnSync(bin, ['parse', path], { encoding: 'utf8' });
      assert.equal(wasm.ok, native.status === 0, name);
      if (wasm.ok) {
        assert.deepEqual(wasm.document, JSON.parse(native.stdout), name);
      } else {
        assert.ok(native.stderr.startsWith(wasm.rendered), name);
      }
      checked += 1;
    }
  }
  assert.ok(checked > 400, `${checked} snippets`);
});
