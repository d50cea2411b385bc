//! JSON-RPC messages over a byte stream, framed as LSP frames them: a
//! `Content-Length` header, a blank line, then that many bytes of JSON.

use std::io::{BufRead, Read, Write};

use serde_json::Value;

/// Largest message read (a server answering with more is broken).
pub(crate) const MAX_MESSAGE: usize = 64 << 20;
/// Longest header line read.
const MAX_HEADER_LINE: usize = 8192;

/// Writes one message.
pub(crate) fn write_message(out: &mut impl Write, message: &Value) -> std::io::Result<()> {
    let body = serde_json::to_vec(message)?;
    write!(out, "Content-Length: {}\r\n\r\n", body.len())?;
    out.write_all(&body)?;
    out.flush()
}

/// Reads one message; `Ok(None)` at the end of the stream.
pub(crate) fn read_message(input: &mut impl BufRead) -> std::io::Result<Option<Value>> {
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        // A header line is read with a bound: a stream without line ends
        // cannot grow it without limit.
        if input.by_ref().take(MAX_HEADER_LINE as u64 + 1).read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        if line.len() > MAX_HEADER_LINE {
            return Err(invalid("header line too long"));
        }
        let line = String::from_utf8_lossy(&line);
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok();
            }
        }
    }
    let length = length.filter(|n| *n <= MAX_MESSAGE).ok_or_else(|| invalid("bad Content-Length"))?;
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    serde_json::from_slice(&body).map(Some).map_err(|e| invalid(&format!("bad JSON: {e}")))
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_round_trip() {
        let mut bytes = Vec::new();
        write_message(&mut bytes, &json!({"jsonrpc": "2.0", "id": 1, "result": "é"})).unwrap();
        write_message(&mut bytes, &json!({"jsonrpc": "2.0", "method": "x"})).unwrap();
        let mut input = std::io::Cursor::new(bytes);
        assert_eq!(read_message(&mut input).unwrap().unwrap()["result"], "é");
        assert_eq!(read_message(&mut input).unwrap().unwrap()["method"], "x");
        assert!(read_message(&mut input).unwrap().is_none());
    }

    #[test]
    fn other_headers_are_skipped_and_bad_lengths_refused() {
        let text = "Content-Type: application/vscode-jsonrpc\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(read_message(&mut std::io::Cursor::new(text)).unwrap(), Some(json!({})));
        let huge = format!("Content-Length: {}\r\n\r\n", MAX_MESSAGE + 1);
        assert!(read_message(&mut std::io::Cursor::new(huge)).is_err());
        let endless = "x".repeat(MAX_HEADER_LINE * 4);
        assert!(read_message(&mut std::io::Cursor::new(endless)).is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_read_without_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let mut input = std::io::Cursor::new(bytes);
            for _ in 0..4 {
                if !matches!(read_message(&mut input), Ok(Some(_))) {
                    break;
                }
            }
        }
    }
}
