//! The server side of one HTTP/1.1 request, for tests that play a model
//! API: the head and the body a client sent.

use std::io::{BufRead as _, BufReader, Read as _};
use std::net::TcpStream;

/// Reads one request from `stream`: its head (lines lowercased) and its
/// body (as long as its `content-length`).
pub fn read_request(stream: &TcpStream) -> (String, Vec<u8>) {
    let mut reader = BufReader::new(stream.try_clone().expect("the stream clones"));
    let (mut head, mut length) = (String::new(), 0);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        let line = line.to_ascii_lowercase();
        if let Some(value) = line.strip_prefix("content-length:") {
            length = value.trim().parse().expect("a length");
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("the whole body");
    (head, body)
}
