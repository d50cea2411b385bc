//! Execution throughput of simple edits on a 100,000-block document.
//!
//! `cargo bench -p ucpkit-engine --bench execute`; divan reports commands/s
//! (pre-parsed commands, as a session runs them).

use divan::counter::ItemsCount;
use divan::Bencher;
use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role};
use ucpkit_engine::Engine;
use ucpkit_ucl::{parse_commands, Command};

fn main() {
    divan::main();
}

const BLOCKS: usize = 100_000;
const COMMANDS: usize = 10_000;

/// 1,000 sections of 99 paragraphs each.
fn document() -> (Document, Vec<BlockId>) {
    let mut doc = Document::with_capacity("bench", BLOCKS);
    let mut ids = Vec::with_capacity(BLOCKS);
    let mut section = BlockId::ROOT;
    for i in 0..BLOCKS - 1 {
        let (content, role) = if i % 100 == 0 {
            (Content::markdown(format!("## Section {i}")), Role::Heading2)
        } else {
            (Content::markdown(format!("Paragraph {i} with a few words of text in it.")), Role::Paragraph)
        };
        let id = Block::derive_id(&content, Some(&role), "bench", 0);
        let parent = if role == Role::Heading2 { BlockId::ROOT } else { section };
        doc.append_child(parent, Block::new(id, content, Metadata::with_role(role.clone()))).unwrap();
        if role == Role::Heading2 {
            section = id;
        }
        ids.push(id);
    }
    (doc, ids)
}

fn script(ids: &[BlockId], kind: &str) -> Vec<Command> {
    let text: String = (0..COMMANDS)
        .map(|i| {
            let id = ids[(i * 7919) % ids.len()];
            match kind {
                "edit" => format!("EDIT {id} SET text = \"Rewritten paragraph {i}\"\n"),
                "append" => format!("APPEND {id} text WITH label=\"n{i}\" :: \"New note {i}\"\n"),
                _ => {
                    if i % 2 == 0 {
                        format!("EDIT {id} SET metadata.tags += [\"seen\"]\n")
                    } else {
                        format!("APPEND {id} text :: \"Note {i}\"\n")
                    }
                }
            }
        })
        .collect();
    parse_commands(&text).unwrap()
}

#[divan::bench(args = ["edit", "append", "mixed"], sample_count = 20)]
fn execute(bencher: Bencher, kind: &str) {
    let (doc, ids) = document();
    let commands = script(&ids, kind);
    bencher.counter(ItemsCount::new(COMMANDS)).with_inputs(|| Engine::new(doc.clone())).bench_local_refs(|engine| {
        for command in &commands {
            engine.execute(command).unwrap();
        }
    });
}
