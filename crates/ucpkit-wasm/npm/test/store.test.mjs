// The Node build of the package: a store in memory, its answers, and bad
// input refused with an Error (never a trap that kills the process).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Store, parseUcl, countTokens } from '../node.js';

const root = new URL('../../../../', import.meta.url).pathname;
const excerpt = join(root, 'tests/data/node-excerpt');

function excerptFiles() {
  const files = {};
  for (const name of readdirSync(excerpt).filter((n) => n.endsWith('.md')).sort()) {
    files[name] = readFileSync(join(excerpt, name), 'utf8');
  }
  return files;
}

test('a context is within its budget, counted exactly, and quotes the corpus verbatim', () => {
  const store = new Store();
  const files = excerptFiles();
  const report = store.index('node', files);
  assert.equal(report.document, 'node');
  assert.equal(report.files, Object.keys(files).length);
  const { text, tokens, budget, blocks } = store.context('How do I encode a domain name with punycode?', { budget: 600 });
  assert.equal(budget, 600);
  assert.ok(tokens > 0 && tokens <= 600, `${tokens} tokens`);
  assert.equal(countTokens(text), tokens);
  assert.ok(blocks.length > 0 && blocks.every((b) => typeof b.id === 'string' && b.heading_path.length > 0));
  const corpus = Object.values(files).join('\n');
  for (const line of text.split('\n').filter((l) => l && !l.startsWith('§'))) {
    assert.ok(corpus.includes(line), `not in the corpus: ${line}`);
  }
});

test('search, UCL runs in named sessions, export and import', () => {
  const store = new Store();
  store.index('node', excerptFiles());
  const hits = store.search('querystring escape', { doc: 'node', limit: 3 });
  assert.ok(hits.length > 0 && hits.length <= 3);
  assert.ok(hits[0].score > 0 && hits[0].score <= 1);
  const first = store.run(`GOTO ${hits[0].id}`, { doc: 'node', session: 's' });
  assert.ok(first.ok, first.text);
  const added = store.run('CTX ADD RESULTS', { session: 's' });
  assert.equal(added.steps.length, 1);
  assert.equal(store.closeSession('s', { doc: 'node' }), true);
  assert.equal(store.closeSession('s'), false, 'a closed session is gone');
  assert.throws(() => store.run(`EDIT ${hits[0].id} SET text = "changed"\nNOPE`, {}), /unknown command 'NOPE'/);
  assert.equal(store.search('querystring escape', { limit: 1 })[0].text, hits[0].text, 'a script that does not parse runs nothing');
  const failed = store.run(`EDIT ${hits[0].id} SET text = "changed"\nEDIT blk_000000000000000000000000 SET text = "x"`, {});
  assert.equal(failed.ok, false);
  assert.equal(failed.steps.length, 2);
  assert.ok(failed.steps[1].error);
  assert.equal(store.search('querystring escape', { limit: 1 })[0].text, hits[0].text, 'a failed script is undone');
  const json = store.exportDocument('node');
  assert.equal(store.importDocument(json, 'copy'), 'copy');
  assert.deepEqual(store.documents().map((d) => d.name), ['copy', 'node']);
  const question = 'What does querystring.escape do?';
  assert.equal(store.context(question, { doc: 'copy', budget: 300 }).text, store.context(question, { doc: 'node', budget: 300 }).text);
  assert.ok(store.remove('copy'));
});

test('UCL parses with diagnostics', () => {
  const ok = parseUcl('GOTO blk_000000000000000000000000\nCTX RENDER');
  assert.equal(ok.ok, true);
  const bad = parseUcl('GOTO');
  assert.equal(bad.ok, false);
  assert.equal(bad.errors[0].line, 1);
  assert.match(bad.rendered, /GOTO/);
});

test('bad input gets an Error with a message and changes nothing', () => {
  const store = new Store();
  assert.throws(() => store.index('bad', { 'a.md': new Uint8Array([0x66, 0xff, 0xfe, 0x0a]) }), /not valid UTF-8/);
  assert.throws(() => store.index('bad', { 'a.md': 'x'.repeat(100_000_000) }), /limit/);
  assert.throws(() => store.index('bad', { 'a.md': new Uint8Array(40 << 20), 'b.md': new Uint8Array(40 << 20) }), /limit/);
  assert.throws(() => store.index('bad', { 'a.png': 'x' }), /unsupported file type/);
  assert.throws(() => store.index('bad', 42), /files must be an object/);
  assert.throws(() => store.index('', { 'a.md': 'x' }), /document name/);
  assert.deepEqual(store.documents(), []);
  store.index('deep', { 'deep.md': '> '.repeat(100_000) + 'x', 'list.md': '- '.repeat(50_000) + 'y' });
  assert.equal(store.documents().length, 1);
  assert.throws(() => store.context('q', { budget: 5 }), /budget/);
  assert.throws(() => store.context('q', { budget: 'lots' }), /whole number/);
  assert.throws(() => store.context('q', { doc: 'none' }), /no document/);
  assert.throws(() => store.run('CTX RENDER', { doc: 7 }), /must be a string/);
  assert.throws(() => parseUcl('GOTO '.repeat(2_000_000)), /limit/);
  const nested = '('.repeat(10_000);
  assert.equal(parseUcl(`FIND PATTERN="${nested}"`).ok, true);
  assert.ok(store.context('what is y?', { budget: 100 }).tokens <= 100, 'the store still answers');
});
