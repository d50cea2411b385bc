// The demo page in a real browser (headless Chromium, UCP_TEST_CHROMIUM):
// served over HTTP, it loads the web build, indexes a markdown file, and
// shows the context for a question within the budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { extname, join, normalize } from 'node:path';

const chromium = process.env.UCP_TEST_CHROMIUM;
const root = new URL('../../../../', import.meta.url).pathname;
const pkg = new URL('../', import.meta.url).pathname;
const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.md': 'text/markdown' };

/** Serves the package folder and the repository's test data. */
function serve() {
  const server = createServer(async (request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url, 'http://x').pathname));
    const file = path.startsWith('/data/') ? join(root, 'tests', path) : join(pkg, path);
    try {
      const body = await readFile(file);
      response.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function dumpDom(url) {
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--virtual-time-budget=60000', '--dump-dom', url];
  return new Promise((resolve, reject) => {
    execFile(chromium, args, { maxBuffer: 1 << 26, timeout: 120_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

const text = (html, id) => {
  const match = html.match(new RegExp(`<[a-z]+ id="${id}"[^>]*>([\\s\\S]*?)</[a-z]+>`));
  return match ? match[1].replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&') : null;
};

test('the demo page builds a context in the browser', { skip: !chromium && 'needs UCP_TEST_CHROMIUM (scripts/setup-chromium)' }, async () => {
  const server = await serve();
  try {
    const { port } = server.address();
    const question = 'How do I convert a Unicode domain name to Punycode?';
    const url = `http://127.0.0.1:${port}/demo/index.html?source=/data/node-excerpt/punycode.md&budget=300&question=${encodeURIComponent(question)}`;
    const html = await dumpDom(url);
    const status = text(html, 'status');
    const context = text(html, 'context');
    assert.match(status ?? '', /^\d+ of 300 tokens, \d+ blocks from \d+ indexed/, status);
    const tokens = Number(status.split(' ')[0]);
    assert.ok(tokens > 0 && tokens <= 300);
    assert.match(context, /punycode\.toASCII\(/);
    const source = await readFile(join(root, 'tests/data/node-excerpt/punycode.md'), 'utf8');
    for (const line of context.split('\n').filter((l) => l && !l.startsWith('§'))) {
      assert.ok(source.includes(line), `not verbatim: ${line}`);
    }
  } finally {
    server.close();
  }
});
