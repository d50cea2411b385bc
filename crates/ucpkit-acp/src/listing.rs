//! `session/list`: the stored sessions, latest first, a page at a time.
//! A cursor names the last session of a page by its save time and name,
//! so a session saved meanwhile (it moves to the front) neither repeats
//! nor hides the others.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{ListSessionsResponse, SessionInfo};
use agent_client_protocol::Error;
use ucpkit_registry::parts::agent::Transcript;
use ucpkit_registry::Library;

use crate::session::internal;

/// Sessions listed per page.
const LIST_PAGE: usize = 50;

/// The stored sessions of `library` (in `cwd` when given), the latest
/// first, from after `cursor`.
pub(crate) fn list(library: &Library, cwd: Option<&Path>, cursor: Option<&str>) -> Result<ListSessionsResponse, Error> {
    let after = cursor.map(parse_cursor).transpose()?;
    let mut stored = library.transcripts().map_err(internal)?;
    // The order of the pages: latest first, then by name.
    stored.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut infos = Vec::new();
    let mut next = None;
    let later = |(name, updated): &(String, u64)| match &after {
        None => true,
        Some((at, last)) => *updated < *at || (*updated == *at && name > last),
    };
    for (name, updated_ms) in stored.iter().filter(|entry| later(entry)) {
        let Ok(Some(saved)) = library.load_transcript(name) else { continue };
        let Ok(transcript) = serde_json::from_str::<Transcript>(&saved.body) else { continue };
        let folder = transcript.cwd.as_deref().map(PathBuf::from);
        if cwd.is_some_and(|cwd| folder.as_deref() != Some(cwd)) {
            continue;
        }
        if infos.len() == LIST_PAGE {
            break;
        }
        let folder = folder.unwrap_or_else(|| PathBuf::from("/"));
        let mut info = SessionInfo::new(name.clone(), folder).updated_at(rfc3339(*updated_ms));
        if let Some(title) = transcript.title {
            info = info.title(title);
        }
        infos.push(info);
        if infos.len() == LIST_PAGE {
            next = Some(format!("{updated_ms}:{name}"));
        }
    }
    // After a full page the client asks once more (an empty page ends it).
    Ok(ListSessionsResponse::new(infos).next_cursor(next))
}

/// A cursor of ours: `<updated ms>:<name>`.
fn parse_cursor(cursor: &str) -> Result<(u64, String), Error> {
    let bad = || Error::invalid_params().data("not a cursor of ours");
    let (at, name) = cursor.split_once(':').ok_or_else(bad)?;
    Ok((at.parse().map_err(|_| bad())?, name.to_owned()))
}

/// `ms` since the epoch as an RFC 3339 time (UTC).
fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest / 60 % 60, rest % 60)
}
