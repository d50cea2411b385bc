//! How much a block counts in a context over several sources before its
//! relevance: code next to prose.

use std::path::Path;

use ucpkit_core::Role;
use ucpkit_orchestrator::ContextBlock;

/// How much a block of code counts in a context over several sources:
/// half. A question asked in words meets code through its identifiers
/// and keywords (`try`, `return`, `get`, `value`), which say what the
/// code does with those names, not what it tells about them, and code
/// holds them densely: a function that merely uses what a question names
/// would outrank the prose of another source that explains it. A context
/// over code alone (`--code`) is ranked the same either way.
const CODE_NEXT_TO_OTHERS: f64 = 0.5;

/// How much `block` counts before its relevance: 1, but
/// [`CODE_NEXT_TO_OTHERS`] for code. A document's code sample (a code
/// block in a file read as prose) counts in full when the question quotes
/// code itself ([`quotes_code`]): such a question asks how the names are
/// written, which is what a sample shows beside the prose explaining it.
/// A program's own code still counts half: it uses the names, it does not
/// explain them.
pub(super) fn prior(block: &ContextBlock, quotes_code: bool) -> f64 {
    let code = block.role.as_deref().is_some_and(|role| role.parse::<Role>().is_ok_and(|role| role.is_code()));
    if !code {
        return 1.0;
    }
    let sample = block.role.as_deref() == Some(Role::Code.as_str())
        && block.file.as_deref().is_some_and(|file| ucpkit_ingest::reads_as_prose(Path::new(file)));
    if sample && quotes_code {
        1.0
    } else {
        CODE_NEXT_TO_OTHERS
    }
}

/// Whether `question` quotes code: a span in backticks, a call (`bool(`),
/// an assignment written without spaces (`daemon=True`), or an identifier
/// joined by `_` or `::` (`default_factory`, `std::io`).
pub(super) fn quotes_code(question: &str) -> bool {
    let chars: Vec<char> = question.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or(' ');
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    chars.contains(&'`')
        || (1..chars.len()).any(|i| {
            let (before, here, after) = (at(i - 1), at(i), at(i + 1));
            match here {
                '(' => ident(before),
                '=' => ident(before) && ident(after),
                '_' => before.is_alphanumeric() && after.is_alphanumeric(),
                ':' => ident(before) && after == ':' && ident(at(i + 2)),
                _ => false,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(role: &str, file: Option<&str>) -> ContextBlock {
        ContextBlock {
            id: ucpkit_core::BlockId::from_bytes([1; 12]),
            document: None,
            role: Some(role.to_owned()),
            file: file.map(str::to_owned),
            lines: None,
            heading_path: Vec::new(),
            occasion: None,
            symbol: None,
            relevance: 1.0,
            representation: ucpkit_context::Representation::Full,
            tokens: 10,
        }
    }

    #[test]
    fn questions_that_quote_code_are_told_from_questions_in_words() {
        for question in [
            "What does `tags: list = []` do?",
            "Why is bool() of a member always true?",
            "Threads created with daemon=True at exit?",
            "What is default_factory for?",
            "Where does std::io::Read come from?",
            "Does __init__() run twice?",
        ] {
            assert!(quotes_code(question), "{question}");
        }
        for question in [
            "How do I stop worker threads at exit?",
            "What happens when a = b in the docs (roughly)?",
            "Which flags does Node.js read, e.g. at start?",
            "A question: what is it?",
            "_private names, and trailing_",
        ] {
            assert!(!quotes_code(question), "{question}");
        }
    }

    #[test]
    fn a_documents_sample_counts_in_full_only_for_a_question_quoting_code() {
        let sample = block("code", Some("library/dataclasses.html"));
        assert_eq!(prior(&sample, true), 1.0);
        assert_eq!(prior(&sample, false), CODE_NEXT_TO_OTHERS);
        for program in [block("code", Some("django/db/models/fields.py")), block("function", Some("docs/conf.md"))] {
            assert_eq!(prior(&program, true), CODE_NEXT_TO_OTHERS, "a program's own code counts half");
        }
        assert_eq!(prior(&block("paragraph", Some("lib/a.py")), true), 1.0, "prose counts in full");
        assert_eq!(prior(&block("code", None), true), CODE_NEXT_TO_OTHERS, "no file: not known to be a sample");
    }
}
