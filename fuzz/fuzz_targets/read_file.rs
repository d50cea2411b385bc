//! Any file content read by the `read` tool a chunk at a time gives the
//! lines `str::lines` gives (each cut to 500 characters), or a refusal
//! when it is not text: never a panic, whatever the bytes.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use ucpkit_tools::{ReadRequest, Tools};

fn folder() -> &'static tempfile::TempDir {
    static FOLDER: OnceLock<tempfile::TempDir> = OnceLock::new();
    FOLDER.get_or_init(|| tempfile::tempdir().expect("a temporary folder"))
}

fuzz_target!(|data: &[u8]| {
    let dir = folder();
    std::fs::write(dir.path().join("f.txt"), data).expect("the file is written");
    let tools = Tools::new(dir.path()).expect("the tools");
    let request = ReadRequest { path: "f.txt".into(), offset: None, limit: Some(1_000_000) };
    let read = tools.read(&request);
    match std::str::from_utf8(data) {
        Ok(text) if !text.contains('\0') => {
            if let Ok(read) = read {
                assert_eq!(read.total_lines, text.lines().count());
            }
        }
        _ => assert!(read.is_err(), "a file that is not text is refused"),
    }
});
