//! Static (model2vec) embeddings: a vector per token, averaged.

use std::path::{Path, PathBuf};

use super::{identity, normalize, read_model_file, Embedder};
use crate::SearchError;

/// A static (model2vec) embedding model: token vectors averaged, so it runs
/// at thousands of texts per second on a CPU. Loads `model.safetensors`,
/// `tokenizer.json` and `config.json` from a directory.
pub struct StaticEmbedder {
    model: model2vec_rs::model::StaticModel,
    identity: String,
    dir: PathBuf,
}

impl StaticEmbedder {
    /// Loads the model in `dir`.
    pub fn load(dir: &Path) -> Result<StaticEmbedder, SearchError> {
        let tokenizer = read_model_file(dir, "tokenizer.json")?;
        let weights = read_model_file(dir, "model.safetensors")?;
        let config = read_model_file(dir, "config.json")?;
        let identity = identity("model2vec", dir, &[&tokenizer, &weights, &config]);
        let model = model2vec_rs::model::StaticModel::from_bytes(tokenizer, weights, config, Some(true))
            .map_err(|e| SearchError::Model { path: dir.to_owned(), message: format!("{e:#}") })?;
        Ok(StaticEmbedder { model, identity, dir: dir.to_owned() })
    }

    /// The directory it was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Embedder for StaticEmbedder {
    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        let mut vectors = self.model.encode(texts);
        for v in &mut vectors {
            normalize(v);
        }
        Ok(vectors)
    }
}
