//! Server-sent events: the stream both APIs answer with when asked to.

use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

use serde_json::Value;

use crate::http::io_error;
use crate::{Cancel, LlmError};

/// Calls `on_event` with the JSON data of every event of `body` until the
/// stream ends or sends `[DONE]`, checking `cancel` between events. A
/// stream that ends without one event was not the API's: refused, with
/// what it held.
pub(crate) fn for_each_event(
    body: impl Read,
    timeout: Duration,
    cancel: &Cancel,
    mut on_event: impl FnMut(Value) -> Result<(), LlmError>,
) -> Result<(), LlmError> {
    let mut reader = BufReader::new(body);
    let mut data = String::new();
    let mut line = String::new();
    let mut events = 0;
    // The start of what came, for the error when no event does.
    let mut other = String::new();
    loop {
        cancel.check()?;
        line.clear();
        let read = reader.read_line(&mut line).map_err(|e| io_error(&e, timeout))?;
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if read == 0 || trimmed.is_empty() {
            if !data.is_empty() {
                if data.trim() == "[DONE]" {
                    return Ok(());
                }
                let event = serde_json::from_str(&data)
                    .map_err(|e| LlmError::Protocol(format!("a streamed event is not JSON ({e})")))?;
                on_event(event)?;
                events += 1;
                data.clear();
            }
            if read == 0 {
                if events == 0 {
                    return Err(LlmError::Protocol(format!(
                        "the answer held no event of a stream; it began: {}",
                        crate::http::received(&other)
                    )));
                }
                return Ok(());
            }
        } else if let Some(rest) = trimmed.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        } else if other.len() < 512 && !trimmed.starts_with(':') && !trimmed.starts_with("event:") {
            other.extend(trimmed.chars().take(512 - other.len()));
            other.push('\n');
        }
        // `event:`, `id:`, `retry:` and comments: the data says it all.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_until_done() {
        let stream =
            "event: a\ndata: {\"n\":1}\n\n: comment\ndata: {\"n\":\ndata: 2}\n\ndata: [DONE]\n\ndata: {\"n\":3}\n\n";
        let mut seen = Vec::new();
        for_each_event(Box::new(stream.as_bytes()), Duration::from_secs(1), &Cancel::new(), |v| {
            seen.push(v["n"].as_i64().unwrap());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, [1, 2]);
        let broken =
            for_each_event(Box::new("data: {\n\n".as_bytes()), Duration::from_secs(1), &Cancel::new(), |_| Ok(()));
        assert!(matches!(broken, Err(LlmError::Protocol(_))));
        let cancel = Cancel::new();
        cancel.cancel();
        let stopped = for_each_event(Box::new("data: {}\n\n".as_bytes()), Duration::from_secs(1), &cancel, |_| Ok(()));
        assert!(matches!(stopped, Err(LlmError::Cancelled)));
        let page = "<!doctype html>\n<html><body>Welcome</body></html>\n";
        let none = for_each_event(page.as_bytes(), Duration::from_secs(1), &Cancel::new(), |_| Ok(()));
        let error = none.unwrap_err().to_string();
        assert!(error.contains("no event") && error.contains("Welcome"), "{error}");
    }
}
