//! The UCL lexer: source text to tokens with byte spans.
//!
//! Tokens carry no data; the parser slices the source by span and decodes
//! strings itself. The parser pulls tokens on demand through a
//! [`TokenStream`] holding two of them, so its memory does not grow with the
//! number of tokens; [`lex`] collects the whole list for tools and benches.

use std::ops::Range;

use logos::{Filter, Logos};

/// One lexical token.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t\r\f]+")]
#[logos(skip r"//[^\n]*")]
pub enum Tok {
    /// End of a line, with any blank lines after it: commands end here.
    #[regex(r"\n[ \t\r\f\n]*")]
    Newline,
    /// A word: keyword, parameter name, identifier, block id or edge type.
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*(-[A-Za-z0-9_]+)*")]
    Word,
    /// An integer, optionally negative.
    #[regex(r"-?[0-9]+")]
    Int,
    /// A number with a fraction or an exponent.
    #[regex(r"-?[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?|-?[0-9]+[eE][+-]?[0-9]+")]
    Float,
    /// A double-quoted string, escapes undecoded.
    #[regex(r#""([^"\\]|\\[\s\S])*""#)]
    DqString,
    /// A single-quoted string, escapes undecoded.
    #[regex(r#"'([^'\\]|\\[\s\S])*'"#)]
    SqString,
    /// A string whose closing quote never comes.
    #[regex(r#""([^"\\]|\\[\s\S])*"#)]
    #[regex(r#"'([^'\\]|\\[\s\S])*"#)]
    Unterminated,
    /// `@label`
    #[regex(r"@[\p{L}\p{N}_]+", extend_label)]
    LabelRef,
    /// `@` before a quoted label.
    #[token("@")]
    At,
    /// One `|a|b|` table row, to the end of the line.
    #[regex(r"\|[^\n]*")]
    TableRow,
    /// `#`; at the start of a line it begins a comment and is skipped.
    #[token("#", hash_or_comment)]
    Hash,
    /// `::`
    #[token("::")]
    DoubleColon,
    /// `:`
    #[token(":")]
    Colon,
    /// `,`
    #[token(",")]
    Comma,
    /// `.`
    #[token(".")]
    Dot,
    /// `$`
    #[token("$")]
    Dollar,
    /// `=`
    #[token("=")]
    Eq,
    /// `!=`
    #[token("!=")]
    Ne,
    /// `>`
    #[token(">")]
    Gt,
    /// `>=`
    #[token(">=")]
    Ge,
    /// `<`
    #[token("<")]
    Lt,
    /// `<=`
    #[token("<=")]
    Le,
    /// `+=`
    #[token("+=")]
    PlusEq,
    /// `-=`
    #[token("-=")]
    MinusEq,
    /// `++`
    #[token("++")]
    PlusPlus,
    /// `--`
    #[token("--")]
    MinusMinus,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// A character no token starts with (produced by [`lex`], never by logos).
    Error,
    /// End of input (produced by [`lex`], never by logos).
    Eof,
}

/// Skips `#` comments that start a line; elsewhere `#` is a token. Only
/// the blanks just before the `#` are looked at, so a line of many `#`s
/// lexes in linear time.
fn hash_or_comment(lex: &mut logos::Lexer<'_, Tok>) -> Filter<()> {
    let before = lex.source()[..lex.span().start].trim_end_matches([' ', '\t', '\r']);
    if before.is_empty() || before.ends_with('\n') || before == BYTE_ORDER_MARK {
        let rest = lex.remainder();
        lex.bump(rest.find('\n').unwrap_or(rest.len()));
        Filter::Skip
    } else {
        Filter::Emit(())
    }
}

/// Extends `@word` over `.`, `:` and `-` runs that are followed by more
/// word characters (`@api.fs:read-file`), never ending on punctuation, so
/// `@a: [..]` stays a label and a colon. (Done by hand: logos does not
/// backtrack out of a trailing punctuation run.)
fn extend_label(lex: &mut logos::Lexer<'_, Tok>) {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let rest = lex.remainder();
    let mut end = rest.find(|c: char| !is_word(c)).unwrap_or(rest.len());
    loop {
        let after = &rest[end..];
        let punctuation = after.find(|c: char| !matches!(c, '.' | ':' | '-')).unwrap_or(after.len());
        let word = after[punctuation..].find(|c: char| !is_word(c)).unwrap_or(after.len() - punctuation);
        if punctuation == 0 || word == 0 {
            break;
        }
        end += punctuation + word;
    }
    lex.bump(end);
}

/// A token and where it sits in the source (byte offsets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// What kind of token.
    pub kind: Tok,
    /// Byte range in the source.
    pub span: Range<usize>,
}

/// A byte-order mark, skipped at the start of a script.
const BYTE_ORDER_MARK: &str = "\u{feff}";

/// Lexes the whole source. Characters no token starts with become
/// [`Tok::Error`] tokens; the list always ends with [`Tok::Eof`]. A leading
/// byte-order mark is skipped.
pub fn lex(source: &str) -> Vec<Token> {
    let mut stream = TokenStream::new(source);
    let mut tokens = Vec::new();
    loop {
        let token = stream.advance();
        let end = token.kind == Tok::Eof;
        tokens.push(token);
        if end {
            return tokens;
        }
    }
}

/// Tokens pulled from the source on demand, with one token of lookahead.
pub(crate) struct TokenStream<'s> {
    lexer: logos::Lexer<'s, Tok>,
    current: Token,
    next: Token,
    previous_end: usize,
}

impl<'s> TokenStream<'s> {
    /// A stream at the first token (after a byte-order mark, if any).
    pub(crate) fn new(source: &'s str) -> Self {
        let mut lexer = Tok::lexer(source);
        if source.starts_with(BYTE_ORDER_MARK) {
            lexer.bump(BYTE_ORDER_MARK.len());
        }
        let current = pull(&mut lexer);
        let next = pull(&mut lexer);
        TokenStream { lexer, current, next, previous_end: 0 }
    }

    /// The current token.
    pub(crate) fn current(&self) -> &Token {
        &self.current
    }

    /// The token after the current one.
    pub(crate) fn lookahead(&self) -> &Token {
        &self.next
    }

    /// Where the last consumed token ended (0 before the first).
    pub(crate) fn previous_end(&self) -> usize {
        self.previous_end
    }

    /// Consumes and returns the current token; at the end it stays at
    /// [`Tok::Eof`].
    pub(crate) fn advance(&mut self) -> Token {
        if self.current.kind == Tok::Eof {
            return self.current.clone();
        }
        self.previous_end = self.current.span.end;
        let next = if self.next.kind == Tok::Eof { self.next.clone() } else { pull(&mut self.lexer) };
        std::mem::replace(&mut self.current, std::mem::replace(&mut self.next, next))
    }
}

fn pull(lexer: &mut logos::Lexer<'_, Tok>) -> Token {
    match lexer.next() {
        Some(kind) => Token { kind: kind.unwrap_or(Tok::Error), span: lexer.span() },
        None => {
            let end = lexer.source().len();
            Token { kind: Tok::Eof, span: end..end }
        }
    }
}

impl Tok {
    /// How the token kind is named in error messages.
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Newline => "end of line",
            Tok::Word => "a word",
            Tok::Int => "an integer",
            Tok::Float => "a number",
            Tok::DqString | Tok::SqString => "a string",
            Tok::Unterminated => "an unterminated string",
            Tok::LabelRef | Tok::At => "a label reference",
            Tok::TableRow => "a table row",
            Tok::Hash => "'#'",
            Tok::DoubleColon => "'::'",
            Tok::Colon => "':'",
            Tok::Comma => "','",
            Tok::Dot => "'.'",
            Tok::Dollar => "'$'",
            Tok::Eq => "'='",
            Tok::Ne => "'!='",
            Tok::Gt => "'>'",
            Tok::Ge => "'>='",
            Tok::Lt => "'<'",
            Tok::Le => "'<='",
            Tok::PlusEq => "'+='",
            Tok::MinusEq => "'-='",
            Tok::PlusPlus => "'++'",
            Tok::MinusMinus => "'--'",
            Tok::LBracket => "'['",
            Tok::RBracket => "']'",
            Tok::LBrace => "'{'",
            Tok::RBrace => "'}'",
            Tok::LParen => "'('",
            Tok::RParen => "')'",
            Tok::Error => "an unexpected character",
            Tok::Eof => "end of input",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> Vec<Tok> {
        lex(source).into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn hash_comments_only_at_line_start() {
        assert_eq!(kinds("# a comment 'with quote\nGOTO"), [Tok::Newline, Tok::Word, Tok::Eof]);
        assert_eq!(kinds("text #blk_a"), [Tok::Word, Tok::Hash, Tok::Word, Tok::Eof]);
        assert_eq!(kinds("  # indented comment"), [Tok::Eof]);
    }

    #[test]
    fn slash_comments_run_to_end_of_line() {
        assert_eq!(kinds("GOTO blk_a // go there\nBACK"), [Tok::Word, Tok::Word, Tok::Newline, Tok::Word, Tok::Eof]);
    }

    #[test]
    fn strings_span_lines_and_keep_escapes() {
        let tokens = lex("\"a\nb\\\"c\" 'd'");
        assert_eq!(tokens[0].kind, Tok::DqString);
        assert_eq!(tokens[0].span, 0..8);
        assert_eq!(tokens[1].kind, Tok::SqString);
        assert_eq!(kinds("\"never closed"), [Tok::Unterminated, Tok::Eof]);
    }

    #[test]
    fn operators_and_numbers() {
        assert_eq!(
            kinds("x -= -5 += 1.5e3 -- ++ != >= <="),
            [
                Tok::Word,
                Tok::MinusEq,
                Tok::Int,
                Tok::PlusEq,
                Tok::Float,
                Tok::MinusMinus,
                Tok::PlusPlus,
                Tok::Ne,
                Tok::Ge,
                Tok::Le,
                Tok::Eof
            ]
        );
        assert_eq!(kinds("count--"), [Tok::Word, Tok::MinusMinus, Tok::Eof]);
        assert_eq!(kinds("needs-review"), [Tok::Word, Tok::Eof]);
    }

    #[test]
    fn labels_never_end_on_punctuation() {
        let tokens = lex("@a.b: [@api.fs:read-file]");
        let texts: Vec<&str> = tokens.iter().map(|t| &"@a.b: [@api.fs:read-file]"[t.span.clone()]).collect();
        assert_eq!(texts, ["@a.b", ":", "[", "@api.fs:read-file", "]", ""]);
    }

    #[test]
    fn blank_lines_are_one_newline_and_a_byte_order_mark_is_skipped() {
        assert_eq!(kinds("GOTO\n\n  \r\nBACK"), [Tok::Word, Tok::Newline, Tok::Word, Tok::Eof]);
        assert_eq!(kinds("\u{feff}# comment\nGOTO"), [Tok::Newline, Tok::Word, Tok::Eof]);
        assert_eq!(lex("\u{feff}GOTO")[0].span, 3..7);
    }

    #[test]
    fn unknown_characters_become_error_tokens() {
        assert_eq!(kinds("GOTO ~"), [Tok::Word, Tok::Error, Tok::Eof]);
    }
}
