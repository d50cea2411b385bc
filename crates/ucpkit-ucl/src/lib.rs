//! UCL, the Unified Content Language: the text interface agents, people and
//! programs use to read and change a UCM document.
//!
//! - [`lex`] turns source into tokens (logos), [`parse_script`] into a
//!   [`UclDocument`] with per-command spans, reporting every error it can
//!   with character-based line and column and a caret snippet
//!   ([`ParseError::render`]);
//! - [`print_document`] / [`print_commands`] write canonical UCL, and
//!   `parse(print(ast)) == ast` for every tree;
//! - [`IdMapper`] swaps full block ids for short integers and back.
//!
//! ```
//! let commands = ucpkit_ucl::parse_commands("expand blk_000000000000000000000000 down depth=2").unwrap();
//! assert_eq!(ucpkit_ucl::print_commands(&commands), "EXPAND blk_000000000000000000000000 DOWN DEPTH=2\n");
//! ```

mod ast;
mod error;
mod lexer;
mod parser;
mod print;

pub use ast::*;
pub use error::{line_column, LineIndex, ParseError, ParseErrors};
pub use lexer::{lex, Tok, Token};
pub use parser::{parse_commands, parse_document, parse_script, parse_script_with, ParseOptions, Script, MAX_NESTING};
pub use print::{content_type_name, print_commands, print_document, quote};
pub use ucpkit_core::IdMapper;
