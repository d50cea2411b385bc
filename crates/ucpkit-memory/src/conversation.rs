//! A conversation written as markdown, read as memories: one per turn.
//!
//! The form chat logs and meeting notes take: a heading per session (its
//! text, often with the date, says when), then one paragraph per turn,
//! `Speaker: what they said`. Each paragraph becomes a memory holding its
//! source text verbatim, with the heading above it as its session and the
//! name before the colon as its speaker. Paragraphs before any heading
//! have no session; lists, quotes and code under a turn are turns of
//! their own, as written.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use crate::NewMemory;

/// The kind of a conversation's turns.
pub use ucpkit_core::outline::TURN_KIND;

/// Longest speaker name read from before a turn's colon, in characters.
const MAX_SPEAKER_CHARS: usize = 40;

/// Most words of a speaker's name.
const MAX_SPEAKER_WORDS: usize = 4;

/// The turns of conversation `text`, in order, as memories to store.
pub fn conversation_turns(text: &str) -> Vec<NewMemory> {
    let mut turns = Vec::new();
    let mut session: Option<String> = None;
    let mut heading: Option<String> = None;
    let mut depth = 0usize;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            // A heading inside a turn (a quote's) is part of the turn.
            Event::Start(Tag::Heading { .. }) if depth == 0 => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) if heading.is_some() => {
                session = heading.take().map(|h| h.trim().to_owned()).filter(|h| !h.is_empty());
            }
            Event::Text(t) | Event::Code(t) if heading.is_some() => {
                heading.as_mut().expect("inside a heading").push_str(&t);
            }
            Event::Start(Tag::Paragraph | Tag::List(_) | Tag::BlockQuote(_) | Tag::CodeBlock(_))
                if heading.is_none() =>
            {
                if depth == 0 {
                    let content = text[range].trim().to_owned();
                    if !content.is_empty() {
                        turns.push(NewMemory {
                            speaker: speaker(&content),
                            session: session.clone(),
                            kind: Some(TURN_KIND.into()),
                            content,
                            ..NewMemory::default()
                        });
                    }
                }
                depth += 1;
            }
            Event::End(TagEnd::Paragraph | TagEnd::List(_) | TagEnd::BlockQuote(_) | TagEnd::CodeBlock)
                if heading.is_none() =>
            {
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    turns
}

/// The speaker a turn names before its first colon (one followed by a
/// space): a short name of a few words that starts with a letter and holds
/// no sentence punctuation.
fn speaker(turn: &str) -> Option<String> {
    let colon = turn.find(':')?;
    if !turn[colon + 1..].starts_with(char::is_whitespace) {
        return None;
    }
    let name = turn[..colon].trim();
    let words = name.split_whitespace().count();
    let plain = name.chars().all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.' | '\''));
    let ok = name.chars().next().is_some_and(char::is_alphabetic)
        && name.chars().count() <= MAX_SPEAKER_CHARS
        && (1..=MAX_SPEAKER_WORDS).contains(&words)
        && plain
        && !name.contains('\n');
    ok.then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAT: &str = "# A chat\n\n## Session 1 (9 May, 2023)\n\nAna: Hi! How was the trip?\n\n\
        Bo: Great: we hiked   a lot.\n[shares a photo: a lake]\n\n## Session 2 (2 June, 2023)\n\n\
        Ana: Bye!\n\n- a list\n- under it\n\n> ## quoted\n> in a turn\n";

    #[test]
    fn each_paragraph_is_a_turn_with_its_session_and_speaker_verbatim() {
        let turns = conversation_turns(CHAT);
        let shown: Vec<(&str, Option<&str>, Option<&str>)> =
            turns.iter().map(|t| (t.content.as_str(), t.speaker.as_deref(), t.session.as_deref())).collect();
        assert_eq!(
            shown,
            vec![
                ("Ana: Hi! How was the trip?", Some("Ana"), Some("Session 1 (9 May, 2023)")),
                ("Bo: Great: we hiked   a lot.\n[shares a photo: a lake]", Some("Bo"), Some("Session 1 (9 May, 2023)")),
                ("Ana: Bye!", Some("Ana"), Some("Session 2 (2 June, 2023)")),
                ("- a list\n- under it", None, Some("Session 2 (2 June, 2023)")),
                ("> ## quoted\n> in a turn", None, Some("Session 2 (2 June, 2023)")),
            ]
        );
        assert!(turns.iter().all(|t| t.kind.as_deref() == Some(TURN_KIND)));
    }

    #[test]
    fn a_sentence_with_a_colon_names_no_speaker() {
        assert_eq!(speaker("Note that the rule is simple: keep it"), None);
        assert_eq!(speaker("Dr. Kim: yes"), Some("Dr. Kim".into()));
        assert_eq!(speaker("http://example.com"), None);
        assert_eq!(speaker("no colon here"), None);
    }

    #[test]
    fn text_before_any_heading_has_no_session() {
        let turns = conversation_turns("Ana: hello\n");
        assert_eq!(turns.len(), 1);
        assert_eq!(turns[0].session, None);
    }
}
