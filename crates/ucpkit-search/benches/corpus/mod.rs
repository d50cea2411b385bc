//! A deterministic synthetic document for search benchmarks: files of
//! sections of paragraphs whose words follow a Zipf law over a 50,000-word
//! vocabulary (as natural text does), with code identifiers mixed in, and
//! query texts drawn the same way. Shared by `benches/search.rs` and
//! `examples/latency.rs`.

#![allow(dead_code)] // each user takes the parts it needs

use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role};
use ucpkit_search::{Embedder, SearchError};

/// The same fixed-seed generator the ingest benchmarks use.
#[path = "../../../ucpkit-ingest/benches/synth/mod.rs"]
mod synth;

pub use synth::Rng;

/// A uniform sample from 0..1.
fn unit(rng: &mut Rng) -> f64 {
    (rng.next() >> 11) as f64 / (1u64 << 53) as f64
}

const SYLLABLES: &[&str] = &[
    "ba", "ko", "ri", "ten", "su", "mal", "de", "vor", "pi", "lu", "gan", "ex", "qua", "zo", "fen", "ti", "mor", "cal",
    "ne", "ost", "ra", "vi", "dun", "sel",
];

/// Words of the vocabulary, most frequent first, and a Zipf sampler.
pub struct Vocabulary {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Vocabulary {
    pub fn new(size: usize) -> Self {
        let words = (0..size)
            .map(|mut n| {
                let mut word = String::new();
                loop {
                    word.push_str(SYLLABLES[n % SYLLABLES.len()]);
                    n /= SYLLABLES.len();
                    if n == 0 {
                        break;
                    }
                }
                word
            })
            .collect();
        let mut total = 0.0;
        let cumulative = (1..=size)
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect::<Vec<_>>();
        let cumulative = cumulative.iter().map(|c| c / total).collect();
        Vocabulary { words, cumulative }
    }

    pub fn sample(&self, rng: &mut Rng) -> &str {
        let at = self.cumulative.partition_point(|&c| c < unit(rng));
        &self.words[at.min(self.words.len() - 1)]
    }

    /// Words of middling frequency, as queries use.
    pub fn query(&self, rng: &mut Rng, words: usize) -> String {
        (0..words)
            .map(|_| {
                let rank = 50 + (rng.next() % 5000) as usize;
                self.words[rank].as_str()
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn paragraph(vocabulary: &Vocabulary, rng: &mut Rng) -> String {
    let words = 20 + (rng.next() % 40) as usize;
    let mut text = String::new();
    for k in 0..words {
        if k > 0 {
            text.push(' ');
        }
        match rng.next() % 25 {
            0 => {
                let (a, b) = (vocabulary.sample(rng).to_owned(), vocabulary.sample(rng));
                text.push_str(&format!("`{a}.{}{}()`", b[..1].to_uppercase(), &b[1..]));
            }
            1 => {
                let (a, b) = (vocabulary.sample(rng).to_owned(), vocabulary.sample(rng));
                text.push_str(&format!("`{a}_{b}`"));
            }
            _ => text.push_str(vocabulary.sample(rng)),
        }
    }
    text.push('.');
    text
}

/// A document of about `blocks` blocks: files of 10 sections of 10
/// subsections of paragraphs.
pub fn document(blocks: usize) -> Document {
    let vocabulary = Vocabulary::new(50_000);
    let mut rng = Rng::new(0x5eed);
    let mut doc = Document::with_capacity("bench", blocks + blocks / 50);
    let mut n = 0u32;
    let mut add = |doc: &mut Document, parent: BlockId, text: String, role: Role| {
        n += 1;
        let content = Content::markdown(text);
        let id = Block::derive_id(&content, Some(&role), "bench", n);
        doc.append_child(parent, Block::new(id, content, Metadata::with_role(role))).expect("parent exists")
    };
    let per_subsection = 20;
    let mut file = 0;
    while doc.len() < blocks {
        let f = add(&mut doc, BlockId::ROOT, format!("{} {file}", vocabulary.sample(&mut rng)), Role::Heading1);
        for _ in 0..10 {
            let title = format!("{} {}", vocabulary.sample(&mut rng), vocabulary.sample(&mut rng));
            let s = add(&mut doc, f, title, Role::Heading2);
            for _ in 0..10 {
                let title = format!("`{}()`", vocabulary.sample(&mut rng));
                let u = add(&mut doc, s, title, Role::Heading3);
                for _ in 0..per_subsection {
                    let text = paragraph(&vocabulary, &mut rng);
                    add(&mut doc, u, text, Role::Paragraph);
                }
            }
        }
        file += 1;
    }
    doc
}

/// `count` queries of `min` to `max` words.
pub fn queries(count: usize, min: usize, max: usize) -> Vec<String> {
    let vocabulary = Vocabulary::new(50_000);
    let mut rng = Rng::new(0x9e37);
    (0..count)
        .map(|_| {
            let words = min + (rng.next() % (max - min + 1) as u64) as usize;
            vocabulary.query(&mut rng, words)
        })
        .collect()
}

/// Pseudo-random unit vectors derived from the text: a stand-in model so
/// vector search can be measured at sizes no real model could embed here.
pub struct HashEmbedder(pub usize);

impl Embedder for HashEmbedder {
    fn dim(&self) -> usize {
        self.0
    }

    fn identity(&self) -> &str {
        "hash"
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        Ok(texts
            .iter()
            .map(|t| {
                let digest = blake3::hash(t.as_bytes());
                let mut rng = Rng::new(u64::from_le_bytes(digest.as_bytes()[..8].try_into().expect("8 bytes")));
                let mut v: Vec<f32> = (0..self.0).map(|_| unit(&mut rng) as f32 - 0.5).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect())
    }
}
