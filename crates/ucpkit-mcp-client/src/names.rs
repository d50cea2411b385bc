//! The names external tools take in UCP's registry:
//! `mcp__<server>__<tool>`, with characters outside `A-Za-z0-9_-`
//! replaced by `_`, and no longer than model APIs accept.

use crate::McpClientError;

/// What every external tool's name starts with.
pub const PREFIX: &str = "mcp__";

/// The longest tool name model APIs accept (OpenAI's and Anthropic's).
pub const MAX_NAME: usize = 64;

/// `text` with every character outside `A-Za-z0-9_-` replaced by `_`.
pub fn sanitized(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// The registry's name of `server`'s tool `tool`, or why it has none.
pub fn tool_name(server: &str, tool: &str) -> Result<String, String> {
    let name = format!("{PREFIX}{}__{}", sanitized(server), sanitized(tool));
    if name.len() > MAX_NAME {
        return Err(format!(
            "{server}'s tool {tool:?} is not offered: its name {name} is longer than {MAX_NAME} characters \
             (give the server a shorter name)"
        ));
    }
    Ok(name)
}

/// Checks a server's name: one to 32 characters of `A-Za-z0-9_-`, no `__`
/// (which separates it from the tool's).
pub fn check_server_name(name: &str) -> Result<(), McpClientError> {
    let fits = !name.is_empty()
        && name.len() <= 32
        && name == sanitized(name)
        && !name.contains("__")
        && !name.starts_with('_')
        && !name.ends_with('_');
    match fits {
        true => Ok(()),
        false => Err(McpClientError::Config(format!(
            "the server name {name:?} must be 1 to 32 letters, digits, '-' or single '_' between them"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_namespaced_and_bounded() {
        assert_eq!(tool_name("files", "read_file").unwrap(), "mcp__files__read_file");
        assert_eq!(tool_name("gh", "issues.list/all").unwrap(), "mcp__gh__issues_list_all");
        let long = "x".repeat(60);
        assert!(tool_name("gh", &long).unwrap_err().contains("longer than 64"));
        assert!(check_server_name("my-server_2").is_ok());
        for bad in ["", "a b", "a__b", "_a", "ü", &"s".repeat(33)] {
            assert!(check_server_name(bad).is_err(), "{bad:?}");
        }
    }
}
