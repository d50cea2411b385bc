//! Times a language server through the client: the first `definition`
//! answer from a cold start (starting, initializing, loading the project:
//! asked again until the answer is not empty), then the median of further
//! requests.
//!
//! ```sh
//! cargo run --release -p ucpkit-lsp --example lsp_timing -- ROOT FILE LINE COLUMN [REQUESTS] [COMMAND...]
//! ```
//! COMMAND is the server (default: the configured one for FILE).

use std::path::Path;
use std::time::{Duration, Instant};

use ucpkit_lsp::{Lsp, LspConfig, ServerConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, file, line, column, rest @ ..] = args.as_slice() else {
        return Err("usage: lsp_timing ROOT FILE LINE COLUMN [REQUESTS] [COMMAND...]".into());
    };
    let (line, column): (u32, u32) = (line.parse()?, column.parse()?);
    let requests: usize = rest.first().map(|n| n.parse()).transpose()?.unwrap_or(50);
    let mut config = LspConfig { timeout_secs: Some(300), ..LspConfig::default() };
    if rest.len() > 1 {
        let extension = Path::new(file).extension().and_then(|e| e.to_str()).unwrap_or("").to_owned();
        let server = ServerConfig { command: rest[1..].to_vec(), extensions: vec![extension], install: None };
        config.servers.retain(|_, s| !s.extensions.contains(&server.extensions[0]));
        config.servers.insert("measured".into(), server);
    }
    let lsp = Lsp::new(Path::new(root), config)?;
    let started = Instant::now();
    let first = loop {
        let places = lsp.definition(file, line, column)?;
        if !places.is_empty() {
            break places;
        }
        if started.elapsed() > Duration::from_secs(600) {
            return Err("no answer within 10 minutes".into());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let cold = started.elapsed();
    let mut times: Vec<Duration> = (0..requests)
        .map(|_| {
            let at = Instant::now();
            lsp.definition(file, line, column).map(|_| at.elapsed())
        })
        .collect::<Result<_, _>>()?;
    times.sort();
    let median = times.get(times.len() / 2).copied().unwrap_or_default();
    println!(
        "first answer {:.2?} ({}:{}); median of {requests} requests {median:.2?}",
        cold, first[0].path, first[0].line
    );
    Ok(())
}
