//! The analyzer as the tantivy index registers it (`ucpkit_analyzer` does the
//! analysis).

use tantivy::tokenizer::TextAnalyzer;
use ucpkit_analyzer::CodeTokenizer;

/// The name the analyzer is registered under in the index.
pub const ANALYZER: &str = "ucp";

/// The full analyzer: code-aware tokens, stop words removed, stemmed.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::from(CodeTokenizer::analyzing())
}
