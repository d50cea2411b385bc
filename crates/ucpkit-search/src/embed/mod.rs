//! Text embeddings from a local model directory; nothing is ever downloaded.
//!
//! Two kinds of model are understood, told apart by the files in the
//! directory ([`load_embedder`]):
//! - a static (model2vec) model — `model.safetensors`, `tokenizer.json`,
//!   `config.json` — whose token vectors are averaged: thousands of texts a
//!   second on a CPU, modest quality ([`StaticEmbedder`]);
//! - a transformer sentence encoder in ONNX form — `model.onnx`,
//!   `tokenizer.json` — run by ONNX Runtime and mean-pooled: tens of texts a
//!   second on two cores, much better retrieval ([`OnnxEmbedder`]).

#[cfg(feature = "models")]
mod onnx;
#[cfg(feature = "models")]
mod static_model;

use std::path::Path;

#[cfg(feature = "models")]
pub use onnx::OnnxEmbedder;
#[cfg(feature = "models")]
pub use static_model::StaticEmbedder;

use crate::SearchError;

/// Turns texts into unit-length vectors of a fixed dimension.
pub trait Embedder: Send + Sync {
    /// Vector length.
    fn dim(&self) -> usize;
    /// Identifies the model and its files: vectors stored under another
    /// identity are recomputed.
    fn identity(&self) -> &str;
    /// One unit-length vector per text.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError>;
    /// [`Embedder::embed`] for the texts of blocks being indexed (never a
    /// query): where an embedder that keeps vectors (in a store every node
    /// reads) looks up and keeps them.
    fn embed_blocks(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        self.embed(texts)
    }
}

/// A model loaded once and shared: each index given it embeds with the same.
impl<E: Embedder + ?Sized> Embedder for std::sync::Arc<E> {
    fn dim(&self) -> usize {
        (**self).dim()
    }

    fn identity(&self) -> &str {
        (**self).identity()
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        (**self).embed(texts)
    }

    fn embed_blocks(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        (**self).embed_blocks(texts)
    }
}

/// Loads the model in `dir`: ONNX when it holds `model.onnx`, model2vec when
/// it holds `model.safetensors`.
#[cfg(feature = "models")]
pub fn load_embedder(dir: &Path) -> Result<Box<dyn Embedder>, SearchError> {
    if dir.join("model.onnx").is_file() {
        Ok(Box::new(OnnxEmbedder::load(dir)?))
    } else if dir.join("model.safetensors").is_file() {
        Ok(Box::new(StaticEmbedder::load(dir)?))
    } else {
        Err(SearchError::Model {
            path: dir.to_owned(),
            message: "holds neither model.onnx (with tokenizer.json) nor model.safetensors (with tokenizer.json \
                      and config.json)"
                .into(),
        })
    }
}

/// Refuses every model: this build has no model support.
#[cfg(not(feature = "models"))]
pub fn load_embedder(dir: &Path) -> Result<Box<dyn Embedder>, SearchError> {
    Err(SearchError::Model {
        path: dir.to_owned(),
        message: "this ucp was built without model support: build it with `--features models` \
                  (cargo install --locked --path crates/ucpkit-cli --features models)"
            .into(),
    })
}

/// A short identity for a model: its kind, its directory's name and a digest
/// of its files.
#[cfg(feature = "models")]
fn identity(kind: &str, dir: &Path, files: &[&[u8]]) -> String {
    let mut hasher = blake3::Hasher::new();
    for file in files {
        hasher.update(&(file.len() as u64).to_le_bytes());
        hasher.update(file);
    }
    let name = dir.file_name().map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
    format!("{kind}:{name}:{}", &hasher.finalize().to_hex()[..16])
}

/// Reads `name` from the model directory `dir`.
#[cfg(feature = "models")]
fn read_model_file(dir: &Path, name: &str) -> Result<Vec<u8>, SearchError> {
    std::fs::read(dir.join(name))
        .map_err(|e| SearchError::Model { path: dir.to_owned(), message: format!("cannot read {name}: {e}") })
}

/// Scales `v` to unit length (a zero vector stays zero).
#[cfg_attr(not(feature = "models"), allow(dead_code))]
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_directory_is_no_model() {
        let dir = tempfile::tempdir().unwrap();
        let error = load_embedder(dir.path()).err().expect("no model");
        assert_eq!(error.code(), "search_model");
        let expected = if cfg!(feature = "models") { "model.onnx" } else { "--features models" };
        assert!(error.to_string().contains(expected), "{error}");
    }

    #[test]
    fn normalize_makes_unit_vectors() {
        let mut v = [3.0, 4.0];
        normalize(&mut v);
        assert_eq!(v, [0.6, 0.8]);
        let mut zero = [0.0; 3];
        normalize(&mut zero);
        assert_eq!(zero, [0.0; 3]);
    }
}
