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
/// block in a file read as prose: markdown or HTML) counts in full when
/// the question quotes code itself ([`quotes_code`]): such a question asks
/// how names are written, which a sample shows beside the prose
/// explaining it. A program's own code still counts half: it uses the
/// names, it does not explain them.
pub(super) fn prior(block: &ContextBlock, quotes_code: bool) -> f64 {
    let Some(role) = block.role.as_deref().and_then(|role| role.parse::<Role>().ok()) else { return 1.0 };
    if !role.is_code() {
        return 1.0;
    }
    let sample =
        role == Role::Code && block.file.as_deref().is_some_and(|file| ucpkit_ingest::reads_as_prose(Path::new(file)));
    if sample && quotes_code {
        1.0
    } else {
        CODE_NEXT_TO_OTHERS
    }
}

/// Whether `question` quotes code: a span in backticks, a call (`bool(`,
/// but not a plural's `(s)`), an assignment or comparison written without
/// spaces (`daemon=True`, `a!=b`), a name joined by `_`, `::` or `.`
/// (`default_factory`, `std::io`, `fs.readFile`), a dunder (`__slots__`),
/// a flag (`--inspect`) or a decorator (`@property`).
pub(super) fn quotes_code(question: &str) -> bool {
    let chars: Vec<char> = question.chars().collect();
    // The character at `i`, a space outside the question.
    let at = |i: Option<usize>| i.and_then(|i| chars.get(i)).copied().unwrap_or(' ');
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    (0..chars.len()).any(|i| {
        let (before, here, after, next) = (at(i.checked_sub(1)), chars[i], at(Some(i + 1)), at(Some(i + 2)));
        let starts_word = before.is_whitespace() || "([{\"'".contains(before);
        match here {
            '`' => {
                let rest = &chars[i + 1..];
                rest.iter().position(|&c| c == '`').is_some_and(|end| rest[..end].iter().any(|c| !c.is_whitespace()))
            }
            '(' => ident(before) && !matches!((after, next, at(Some(i + 3))), ('s', ')', _) | ('e', 's', ')')),
            '=' => (ident(before) || "=!<>+-*/".contains(before)) && (ident(after) || after == '='),
            '_' => {
                let (letter_before, letter_after) = (before.is_ascii_alphanumeric(), after.is_ascii_alphanumeric());
                (letter_before && (letter_after || after == '_')) || (before == '_' && letter_after)
            }
            ':' => ident(before) && after == ':' && ident(next),
            '.' => {
                // Two names of two characters or more, each starting in
                // lower case (`fs.readFile`, not `Node.js` or `e.g.`).
                let left: Vec<char> = chars[..i].iter().rev().copied().take_while(|&c| ident(c)).collect();
                let right: Vec<char> = chars[i + 1..].iter().copied().take_while(|&c| ident(c)).collect();
                left.len() >= 2
                    && left.last().is_some_and(char::is_ascii_lowercase)
                    && right.len() >= 2
                    && right[0].is_ascii_lowercase()
            }
            '-' => starts_word && after == '-' && next.is_ascii_alphabetic(),
            '@' => starts_word && after.is_ascii_alphabetic(),
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
            "Is a!=b the same as not a==b?",
            "What is default_factory for, or x_y?",
            "Where does std::io::Read come from, and fs.readFile?",
            "Does __init__ run twice, and what do __slots__ save?",
            "What does node --inspect open?",
            "Can @property take arguments?",
        ] {
            assert!(quotes_code(question), "{question}");
        }
        for question in [
            "How do I stop worker threads at exit?",
            "What happens when a = b in the docs (roughly)?",
            "Which argument(s) and switch(es) does it take?",
            "Which flags does Node.js read, e.g. at start, i.e. in README.md?",
            "A question: what is it?",
            "What`s the default?",
            "_private names, trailing_ ones, and a -- dash",
            "装饰器(decorator) 是什么?",
            "Mail me@home at ten.",
        ] {
            assert!(!quotes_code(question), "{question}");
        }
    }

    #[test]
    fn a_documents_sample_counts_in_full_only_for_a_question_quoting_code() {
        let sample = block("code", Some("pages/widgets.html"));
        assert_eq!(prior(&sample, true), 1.0);
        assert_eq!(prior(&sample, false), CODE_NEXT_TO_OTHERS);
        for program in [block("code", Some("app/models/shapes.py")), block("function", Some("notes/setup.md"))] {
            assert_eq!(prior(&program, true), CODE_NEXT_TO_OTHERS, "a program's own code counts half");
        }
        assert_eq!(prior(&block("paragraph", Some("lib/a.py")), true), 1.0, "prose counts in full");
        assert_eq!(prior(&block("code", None), true), CODE_NEXT_TO_OTHERS, "no file: not known to be a sample");
    }
}
