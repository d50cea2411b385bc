//! Writes the deterministic synthetic benchmark corpus.
//!
//! `gen_corpus OUT.md SIZE_MB` writes one file; `gen_corpus OUT_DIR SIZE_MB
//! FILES` writes a folder of FILES files. The same arguments always give the
//! same bytes.

#[path = "../benches/synth/mod.rs"]
mod synth;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: gen_corpus OUT.md SIZE_MB | gen_corpus OUT_DIR SIZE_MB FILES";
    let (Some(out), Some(size)) = (args.first(), args.get(1).and_then(|s| s.parse::<f64>().ok())) else {
        eprintln!("{usage}");
        std::process::exit(1);
    };
    let bytes = (size * 1e6) as usize;
    let mut rng = synth::Rng::new(0x5eed);
    match args.get(2).and_then(|s| s.parse::<usize>().ok()) {
        None => std::fs::write(out, synth::markdown_file(&mut rng, 0, 1, bytes)).expect("write corpus"),
        Some(files) => {
            std::fs::create_dir_all(out).expect("create corpus folder");
            for file in 0..files {
                let text = synth::markdown_file(&mut rng, file, files, bytes / files.max(1));
                std::fs::write(format!("{out}/f{file:05}.md"), text).expect("write corpus file");
            }
        }
    }
}
