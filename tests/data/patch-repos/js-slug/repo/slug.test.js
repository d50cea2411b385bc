'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { slugify } = require('./slug.js');

test('no dash is left at either end', () => {
  assert.strictEqual(slugify('  Hello, World!  '), 'hello-world');
});

test('accents are dropped', () => {
  assert.strictEqual(slugify('Crème brûlée'), 'creme-brulee');
});

test('runs of punctuation are one dash', () => {
  assert.strictEqual(slugify('a -- b__c'), 'a-b-c');
});

test('a long slug is cut, with no dash at the cut', () => {
  assert.strictEqual(slugify('the quick brown fox', 10), 'the-quick');
});

test('no limit by default', () => {
  assert.strictEqual(slugify('one two three four five six'), 'one-two-three-four-five-six');
});
