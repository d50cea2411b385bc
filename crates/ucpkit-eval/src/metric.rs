//! The metric: an answer counts when it appears in the context verbatim
//! after every run of whitespace is collapsed to one space, in both.

/// `text` with every run of whitespace made one space.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Which of a question's answers a context holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answered {
    /// Every answer appears.
    pub all: bool,
    /// At least one does.
    pub any: bool,
}

/// Checks `answers` against `context` (case-sensitive).
pub fn answered(context: &str, answers: &[String]) -> Answered {
    let context = collapse_whitespace(context);
    let found = answers.iter().filter(|a| context.contains(&collapse_whitespace(a))).count();
    Answered { all: !answers.is_empty() && found == answers.len(), any: found > 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_is_collapsed_and_case_kept() {
        let context = "Use `fs.readFile()`\n   to read\tthe whole file.";
        let all = answered(context, &["`fs.readFile()` to read".into(), "whole  file".into()]);
        assert_eq!(all, Answered { all: true, any: true });
        let some = answered(context, &["to read".into(), "Whole file".into()]);
        assert_eq!(some, Answered { all: false, any: true });
        assert_eq!(answered(context, &[]), Answered { all: false, any: false });
    }
}
