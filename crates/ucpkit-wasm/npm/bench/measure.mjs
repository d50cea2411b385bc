// Figures of the Node build: module load and instantiation, the first
// tokenizer use (its tables are built in memory), ingest MB/s, and the
// median context time over a question file.
//
//   node bench/measure.mjs CORPUS_DIR QUESTIONS.jsonl [BUDGET] [ROUNDS]
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const [corpus, questionsFile, budgetArg = '2000', roundsArg = '3'] = process.argv.slice(2);
const budget = Number(budgetArg);
const rounds = Number(roundsArg);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

let t = performance.now();
const { Store, countTokens } = await import('../node.js');
const loaded = performance.now() - t;
t = performance.now();
countTokens('warm the tokenizer');
const tables = performance.now() - t;

const files = {};
let bytes = 0;
for (const name of readdirSync(corpus).filter((n) => !n.startsWith('.')).sort()) {
  const path = join(corpus, name);
  if (!statSync(path).isFile()) continue;
  files[name] = readFileSync(path);
  bytes += files[name].length;
}
const ingests = [];
let store;
for (let i = 0; i < rounds; i++) {
  store = new Store();
  t = performance.now();
  store.index('docs', files);
  ingests.push(performance.now() - t);
}
const questions = readFileSync(questionsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).question);
const times = [];
for (let i = 0; i < rounds; i++) {
  for (const question of questions) {
    t = performance.now();
    store.context(question, { doc: 'docs', budget });
    times.push(performance.now() - t);
  }
}
const ingest = median(ingests);
console.log(JSON.stringify({
  module_load_and_instantiate_ms: +loaded.toFixed(1),
  first_token_count_ms: +tables.toFixed(1),
  corpus_mb: +(bytes / 1e6).toFixed(2),
  ingest_ms_median: +ingest.toFixed(0),
  ingest_mb_per_s: +((bytes / 1e6) / (ingest / 1000)).toFixed(2),
  questions: questions.length,
  budget,
  context_ms_p50: +median(times).toFixed(1),
  context_ms_max: +Math.max(...times).toFixed(1),
}));
