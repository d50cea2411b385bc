//! What a grep answer costs in tokens, in each output mode, for the same
//! query: `cargo run --release -p ucpkit-tools --example answer_tokens -- ROOT PATTERN...`.

use ucpkit_core::{BpeTokenizer, Tokenizer as _};
use ucpkit_tools::{GrepRequest, OutputMode, Tools};

fn main() {
    let mut args = std::env::args().skip(1);
    let root = args.next().expect("usage: answer_tokens ROOT PATTERN...");
    let tools = Tools::new(root).expect("a folder");
    let tokenizer = BpeTokenizer::default();
    println!("{:<28} {:>7} {:>18} {:>9} {:>9}", "pattern", "files", "files_with_matches", "count", "content");
    for pattern in args {
        let cost = |mode| {
            let answer = tools.grep(&GrepRequest { pattern: pattern.clone(), output_mode: mode, ..Default::default() });
            let answer = answer.expect("a grep answer");
            (answer.page.total, tokenizer.count(&answer.text))
        };
        let (files, listed) = cost(OutputMode::FilesWithMatches);
        let (_, counted) = cost(OutputMode::Count);
        let (_, content) = cost(OutputMode::Content);
        println!("{pattern:<28} {files:>7} {listed:>18} {counted:>9} {content:>9}");
    }
}
