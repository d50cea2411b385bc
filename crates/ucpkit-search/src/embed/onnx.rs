//! Transformer sentence embeddings (all-MiniLM-L6-v2 and its kin) in ONNX
//! form, run by ONNX Runtime and mean-pooled over the attention mask.
//!
//! ONNX Runtime is loaded at run time from a shared library (never
//! downloaded): `libonnxruntime.so*` inside the model directory, or the file
//! `UCP_ORT_LIB` (or `ORT_DYLIB_PATH`) names. `scripts/fetch-model minilm`
//! puts one beside the model, taken from the `onnxruntime` wheel on PyPI.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;
use ort::session::{Session, SessionInputValue};
use ort::value::Tensor;
use tokenizers::{Tokenizer, TruncationParams};

use super::{identity, normalize, read_model_file, Embedder};
use crate::SearchError;

/// Longest input, in model tokens: the rest of a text is cut off (the
/// sentence-transformers setting of MiniLM).
const MAX_TOKENS: usize = 256;

/// Texts per forward pass.
const BATCH: usize = 32;

/// ONNX Runtime, loaded once per process from the first library asked for.
static RUNTIME: OnceLock<Result<(PathBuf, Environment), String>> = OnceLock::new();

/// A sentence encoder in ONNX form with its tokenizer.
pub struct OnnxEmbedder {
    session: Mutex<Session>,
    tokenizer: Tokenizer,
    /// Whether the graph takes `token_type_ids` (BERT does).
    token_types: bool,
    dim: usize,
    identity: String,
}

/// The ONNX Runtime library to load for a model in `dir`.
fn runtime_library(dir: &Path) -> Option<PathBuf> {
    for var in ["UCP_ORT_LIB", "ORT_DYLIB_PATH"] {
        if let Some(path) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            return Some(PathBuf::from(path));
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libonnxruntime.so")))
        .collect();
    found.sort();
    found.into_iter().next()
}

fn environment(dir: &Path) -> Result<&'static Environment, SearchError> {
    let fail = |message: String| SearchError::Model { path: dir.to_owned(), message };
    let library = runtime_library(dir).ok_or_else(|| {
        fail(
            "ONNX Runtime was not found: put libonnxruntime.so in the model directory or name it with UCP_ORT_LIB \
              (scripts/fetch-model minilm does the first)"
                .into(),
        )
    })?;
    let loaded = RUNTIME.get_or_init(|| {
        let built = ort::init_from(&library)
            .map_err(|e| format!("cannot load ONNX Runtime from {}: {e}", library.display()))?
            .with_name("ucp")
            .build()
            .map_err(|e| format!("cannot start ONNX Runtime from {}: {e}", library.display()))?;
        Ok((library.clone(), built))
    });
    match loaded {
        Ok((_, environment)) => Ok(environment),
        Err(message) => Err(fail(message.clone())),
    }
}

impl OnnxEmbedder {
    /// Loads `model.onnx` and `tokenizer.json` from `dir`.
    pub fn load(dir: &Path) -> Result<OnnxEmbedder, SearchError> {
        let fail = |message: String| SearchError::Model { path: dir.to_owned(), message };
        let model_bytes = read_model_file(dir, "model.onnx")?;
        let tokenizer_bytes = read_model_file(dir, "tokenizer.json")?;
        let identity = identity("onnx", dir, &[&model_bytes, &tokenizer_bytes]);
        let mut tokenizer =
            Tokenizer::from_bytes(&tokenizer_bytes).map_err(|e| fail(format!("tokenizer.json: {e}")))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..TruncationParams::default() }))
            .map_err(|e| fail(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(None);
        let environment = environment(dir)?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let session = Session::builder(environment)
            .and_then(|b| Ok(b.with_intra_threads(threads)?))
            .and_then(|mut b| b.commit_from_memory(&model_bytes))
            .map_err(|e| fail(format!("model.onnx: {e}")))?;
        let names: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
        for needed in ["input_ids", "attention_mask"] {
            if !names.contains(&needed) {
                return Err(fail(format!("model.onnx takes {names:?}, not {needed}: not a sentence encoder")));
            }
        }
        let token_types = names.contains(&"token_type_ids");
        let mut embedder = OnnxEmbedder { session: Mutex::new(session), tokenizer, token_types, dim: 0, identity };
        let probe = embedder.forward(&["dimension probe"]).map_err(|e| fail(e.to_string()))?;
        embedder.dim = probe.first().map_or(0, Vec::len);
        if embedder.dim == 0 {
            return Err(fail("model.onnx gives empty vectors".into()));
        }
        Ok(embedder)
    }

    /// Mean-pooled, normalized vectors of one batch.
    fn forward(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, SearchError> {
        let failed = |e: &dyn std::fmt::Display| SearchError::Vector(format!("embedding failed: {e}"));
        let encodings = self.tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| failed(&e))?;
        let width = encodings.iter().map(|e| e.get_ids().len()).max().unwrap_or(0).max(1);
        let rows = encodings.len();
        let mut ids = vec![0i64; rows * width];
        let mut mask = vec![0i64; rows * width];
        let mut types = vec![0i64; rows * width];
        for (row, encoding) in encodings.iter().enumerate() {
            let at = row * width;
            for (k, ((&id, &m), &t)) in
                encoding.get_ids().iter().zip(encoding.get_attention_mask()).zip(encoding.get_type_ids()).enumerate()
            {
                ids[at + k] = i64::from(id);
                mask[at + k] = i64::from(m);
                types[at + k] = i64::from(t);
            }
        }
        let shape = [rows, width];
        let tensor = |data: Vec<i64>| Tensor::from_array((shape, data)).map_err(|e| failed(&e));
        let mut inputs: Vec<(Cow<'_, str>, SessionInputValue<'_>)> =
            vec![("input_ids".into(), tensor(ids)?.into()), ("attention_mask".into(), tensor(mask.clone())?.into())];
        if self.token_types {
            inputs.push(("token_type_ids".into(), tensor(types)?.into()));
        }
        let mut session = self.session.lock().unwrap_or_else(|e| e.into_inner());
        let outputs = session.run(inputs).map_err(|e| failed(&e))?;
        let (shape, data) = outputs[0].try_extract_tensor::<f32>().map_err(|e| failed(&e))?;
        let vectors: Vec<Vec<f32>> = match **shape {
            // Token states: mean over the tokens the mask keeps.
            [b, t, d] if b as usize == rows && t as usize == width => {
                let (t, d) = (t as usize, d as usize);
                (0..rows)
                    .map(|row| {
                        let mut sum = vec![0f32; d];
                        let mut kept = 0f32;
                        for k in 0..t {
                            if mask[row * width + k] == 0 {
                                continue;
                            }
                            kept += 1.0;
                            let state = &data[(row * t + k) * d..(row * t + k + 1) * d];
                            sum.iter_mut().zip(state).for_each(|(s, x)| *s += x);
                        }
                        sum.iter_mut().for_each(|s| *s /= kept.max(1.0));
                        sum
                    })
                    .collect()
            }
            // Already pooled sentence vectors.
            [b, d] if b as usize == rows => data.chunks_exact(d as usize).map(<[f32]>::to_vec).collect(),
            ref other => return Err(failed(&format!("unexpected output shape {other:?}"))),
        };
        Ok(vectors
            .into_iter()
            .map(|mut v| {
                normalize(&mut v);
                v
            })
            .collect())
    }
}

impl Embedder for OnnxEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }

    fn identity(&self) -> &str {
        &self.identity
    }

    /// Texts are run in batches of similar length, so little of each pass
    /// is padding; results come back in the order asked.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        let mut by_length: Vec<usize> = (0..texts.len()).collect();
        by_length.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for batch in by_length.chunks(BATCH) {
            let slice: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
            for (&i, vector) in batch.iter().zip(self.forward(&slice)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }
}
