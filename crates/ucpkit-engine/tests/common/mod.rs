//! Shared fixtures: a small hand-built document and the Node.js excerpt.

#![allow(dead_code)]

use std::path::Path;

use ucpkit_core::{BlockId, Document};
use ucpkit_engine::{Engine, EngineError, Outcome};
use ucpkit_ucl::parse_commands;

/// The Node.js documentation excerpt shipped with the repository, ingested.
pub fn node_excerpt() -> Document {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt");
    ucpkit_ingest::ingest(&[dir], "node", &ucpkit_ingest::IngestOptions::default(), &()).unwrap().document
}

/// A fixed clock, so outcomes and JSON are reproducible.
pub fn clock() -> i64 {
    1_700_000_000_000
}

/// An engine over an empty document with a fixed clock.
pub fn engine() -> Engine {
    let mut engine = Engine::new(Document::new("t"));
    engine.set_clock(clock);
    engine
}

/// Runs every command of `script`, panicking on the first error.
pub fn run(engine: &mut Engine, script: &str) -> Vec<Outcome> {
    let commands = parse_commands(script).unwrap_or_else(|e| panic!("{}", e.render(script)));
    commands.iter().map(|c| engine.execute(c).unwrap_or_else(|e| panic!("{c}: {e}"))).collect()
}

/// Runs one command that must fail, checking the document did not change.
pub fn fails(engine: &mut Engine, command: &str) -> EngineError {
    let before = engine.document().to_json(false);
    let parsed = parse_commands(command).unwrap_or_else(|e| panic!("{}", e.render(command)));
    let error = engine.execute(&parsed[0]).expect_err(command);
    assert_eq!(engine.document().to_json(false), before, "{command} failed but changed the document");
    error
}

/// The root id as UCL text.
pub const ROOT: &str = "blk_000000000000000000000000";

/// The id created by the single APPEND of `outcomes[i]`.
pub fn created(outcome: &Outcome) -> BlockId {
    outcome.created[0]
}
