//! Session commands on a generated 1,000,000-block document:
//! `cargo bench -p ucpkit-sessions --bench traversal`.
//!
//! The document: 100 files × 10 sections × 10 subsections × 99 paragraphs
//! (≈ 1.0M blocks, depth 4) with one `links_to` edge every 50 paragraphs.
//! Commands are parsed once, outside the timed part, as a session receives
//! them.

use std::sync::{Arc, OnceLock};

use divan::counter::ItemsCount;
use divan::Bencher;
use ucpkit_core::{Block, BlockId, Content, Document, Edge, EdgeType, Metadata, Role};
use ucpkit_engine::Engine;
use ucpkit_sessions::{GlobalLimits, SessionConfig, SessionHost, SessionId};
use ucpkit_ucl::{parse_commands, Command};

fn main() {
    divan::main();
}

struct Fixture {
    traversal: Arc<SessionHost>,
    paragraphs: Vec<BlockId>,
    sections: Vec<BlockId>,
}

fn block(doc: &mut Document, parent: BlockId, text: String, role: Role, n: usize) -> BlockId {
    let content = Content::markdown(text);
    let id = Block::derive_id(&content, Some(&role), "bench", n as u32);
    let mut metadata = Metadata::with_role(role);
    metadata.tokens = Some(12);
    doc.append_child(parent, Block::new(id, content, metadata)).unwrap()
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let mut doc = Document::with_capacity("bench", 1_011_101);
        let (mut paragraphs, mut sections) = (Vec::new(), Vec::new());
        let mut n = 0;
        for f in 0..100 {
            let file = block(&mut doc, BlockId::ROOT, format!("# File {f}"), Role::Heading1, n);
            for s in 0..10 {
                n += 1;
                let section = block(&mut doc, file, format!("## Section {f}.{s}"), Role::Heading2, n);
                sections.push(section);
                for u in 0..10 {
                    n += 1;
                    let sub = block(&mut doc, section, format!("### Topic {f}.{s}.{u}"), Role::Heading3, n);
                    for p in 0..99 {
                        n += 1;
                        let text =
                            format!("Paragraph {p} about topic {f}.{s}.{u}: install, configure and run the tool.");
                        paragraphs.push(block(&mut doc, sub, text, Role::Paragraph, n));
                    }
                }
            }
        }
        for (i, from) in paragraphs.iter().enumerate().step_by(50) {
            let to = paragraphs[(i * 7919 + 13) % paragraphs.len()];
            doc.add_edge(Edge::new(*from, EdgeType::LinksTo, to)).unwrap();
        }
        let limits = GlobalLimits { max_ops_per_second: u32::MAX, max_sessions: 64, ..GlobalLimits::default() };
        let traversal = Arc::new(SessionHost::with_limits(Engine::new(doc), limits));
        Fixture { traversal, paragraphs, sections }
    })
}

fn commands(text: impl IntoIterator<Item = String>) -> Vec<Command> {
    let text: String = text.into_iter().map(|l| l + "\n").collect();
    parse_commands(&text).unwrap()
}

fn session(fixture: &Fixture) -> SessionId {
    fixture.traversal.create_session(SessionConfig::default()).unwrap()
}

/// Runs each command once per iteration, cycling through the list.
fn cycle(bencher: Bencher, list: Vec<Command>) {
    let fixture = fixture();
    let id = session(fixture);
    let mut i = 0;
    bencher.bench_local(|| {
        let step = fixture.traversal.execute(id, &list[i % list.len()]).unwrap();
        i += 1;
        step
    });
    fixture.traversal.close_session(id).unwrap();
}

#[divan::bench]
fn goto(bencher: Bencher) {
    let f = fixture();
    cycle(bencher, commands((0..1000).map(|i| format!("GOTO {}", f.paragraphs[i * 997 % f.paragraphs.len()]))));
}

#[divan::bench]
fn view_preview(bencher: Bencher) {
    let f = fixture();
    cycle(
        bencher,
        commands((0..1000).map(|i| format!("VIEW {} MODE=preview", f.paragraphs[i * 997 % f.paragraphs.len()]))),
    );
}

#[divan::bench]
fn view_full(bencher: Bencher) {
    let f = fixture();
    cycle(bencher, commands((0..1000).map(|i| format!("VIEW {}", f.paragraphs[i * 997 % f.paragraphs.len()]))));
}

/// A section's 10 topics and their 990 paragraphs would exceed the result
/// cap, so this lists 100 (the default max_results_per_operation).
#[divan::bench]
fn expand_down_depth_2(bencher: Bencher) {
    let f = fixture();
    cycle(
        bencher,
        commands((0..100).map(|i| format!("EXPAND {} DOWN DEPTH=2 MODE=ids", f.sections[i * 7 % f.sections.len()]))),
    );
}

#[divan::bench]
fn path_between_random_blocks(bencher: Bencher) {
    let f = fixture();
    let n = f.paragraphs.len();
    cycle(
        bencher,
        commands(
            (0..200)
                .map(|i| format!("PATH {} TO {}", f.paragraphs[i * 7919 % n], f.paragraphs[(i * 104_729 + 17) % n])),
        ),
    );
}

#[divan::bench(sample_count = 20)]
fn find_by_role(bencher: Bencher) {
    cycle(bencher, commands(["FIND ROLE=heading3".to_owned()]));
}

#[divan::bench(sample_count = 20)]
fn find_pattern(bencher: Bencher) {
    cycle(bencher, commands(["FIND PATTERN=\"topic 7[.]3[.][0-9]: install\"".to_owned()]));
}

/// CTX RENDER of a full 8,000-token window.
#[divan::bench]
fn ctx_render_8000_tokens(bencher: Bencher) {
    let f = fixture();
    let id = session(f);
    for p in f.paragraphs.iter().step_by(4001).take(400) {
        f.traversal.execute(id, &commands([format!("CTX ADD {p}")])[0]).unwrap();
    }
    let tokens = f.traversal.with_session(id, |s| s.window().tokens()).unwrap();
    assert!(tokens > 7000, "window holds {tokens} tokens");
    let render = commands(["CTX RENDER".to_owned()]);
    bencher.bench_local(|| f.traversal.execute(id, &render[0]).unwrap());
    f.traversal.close_session(id).unwrap();
}

/// 50 sessions on 2 threads, each running GOTO, VIEW, CTX ADD, CTX STATS,
/// EXPAND and CTX REMOVE in turn; reports commands per second in total.
#[divan::bench(sample_count = 10)]
fn fifty_sessions_two_threads(bencher: Bencher) {
    let f = fixture();
    let sessions: Vec<SessionId> = (0..50).map(|_| session(f)).collect();
    let per_session = 600;
    let scripts: Vec<Vec<Command>> = (0..50)
        .map(|s| {
            commands((0..per_session / 6).flat_map(|i| {
                let p = f.paragraphs[(s * 20_011 + i * 997) % f.paragraphs.len()];
                [
                    format!("GOTO {p}"),
                    format!("VIEW {p} MODE=preview"),
                    format!("CTX ADD {p}"),
                    "CTX STATS".to_owned(),
                    format!("EXPAND {p} UP DEPTH=2 MODE=ids"),
                    format!("CTX REMOVE {p}"),
                ]
            }))
        })
        .collect();
    bencher.counter(ItemsCount::new(50 * per_session)).bench_local(|| {
        std::thread::scope(|scope| {
            for half in 0..2 {
                let (sessions, scripts) = (&sessions, &scripts);
                scope.spawn(move || {
                    for (s, id) in sessions.iter().enumerate().skip(half).step_by(2) {
                        for command in &scripts[s] {
                            f.traversal.execute(*id, command).unwrap();
                        }
                    }
                });
            }
        });
    });
    for id in sessions {
        f.traversal.close_session(id).unwrap();
    }
}
