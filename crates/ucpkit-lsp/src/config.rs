//! Which language server serves which files: built-in defaults (`pylsp`,
//! `rust-analyzer`, `typescript-language-server`, `gopls`), replaced or
//! added to by a TOML file:
//!
//! ```toml
//! timeout_secs = 30
//! [servers.python]
//! command = ["pyright-langserver", "--stdio"]
//! extensions = ["py", "pyi"]
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::LspError;

/// One language server.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program and its arguments (it speaks LSP over stdio).
    pub command: Vec<String>,
    /// Extensions (without the dot) of the files it serves.
    pub extensions: Vec<String>,
    /// How to install it, told when it cannot be started.
    #[serde(default)]
    pub install: Option<String>,
}

/// The language servers, by name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LspConfig {
    /// Servers by name.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerConfig>,
    /// Seconds a request may take (default 30).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

fn server(command: &[&str], extensions: &[&str], install: &str) -> ServerConfig {
    ServerConfig {
        command: command.iter().map(|s| (*s).to_owned()).collect(),
        extensions: extensions.iter().map(|s| (*s).to_owned()).collect(),
        install: Some(install.to_owned()),
    }
}

impl Default for LspConfig {
    fn default() -> Self {
        let servers = BTreeMap::from([
            ("python".to_owned(), server(&["pylsp"], &["py", "pyi"], "pip install python-lsp-server")),
            ("rust".to_owned(), server(&["rust-analyzer"], &["rs"], "rustup component add rust-analyzer")),
            (
                "typescript".to_owned(),
                server(
                    &["typescript-language-server", "--stdio"],
                    &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
                    "npm install -g typescript-language-server typescript",
                ),
            ),
            ("go".to_owned(), server(&["gopls"], &["go"], "go install golang.org/x/tools/gopls@latest")),
        ]);
        LspConfig { servers, timeout_secs: None }
    }
}

impl LspConfig {
    /// The defaults with the servers of the TOML file at `path` replacing
    /// those of the same name (and its timeout, when it sets one).
    pub fn load(path: &Path) -> Result<LspConfig, LspError> {
        let text = std::fs::read_to_string(path).map_err(|e| LspError::Config(format!("{}: {e}", path.display())))?;
        LspConfig::parse(&text).map_err(|e| LspError::Config(format!("{}: {e}", path.display())))
    }

    /// The defaults overlaid with TOML `text`.
    pub fn parse(text: &str) -> Result<LspConfig, String> {
        let own: LspConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut config = LspConfig::default();
        for (name, server) in own.servers {
            if server.command.is_empty() {
                return Err(format!("server {name}: command is empty"));
            }
            config.servers.insert(name, server);
        }
        config.timeout_secs = own.timeout_secs.or(config.timeout_secs);
        Ok(config)
    }

    /// The server of a file, by its extension: its name and configuration.
    pub fn server_for(&self, path: &Path) -> Option<(&str, &ServerConfig)> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        self.servers.iter().find(|(_, s)| s.extensions.contains(&ext)).map(|(n, s)| (n.as_str(), s))
    }
}

/// The LSP language id of a file, by its extension.
pub(crate) fn language_id(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "py" | "pyi" => "python",
        "rs" => "rust",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        _ => "plaintext",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_replaces_a_default_and_adds_servers() {
        let config = LspConfig::parse(
            "timeout_secs = 5\n[servers.python]\ncommand = [\"pyright-langserver\", \"--stdio\"]\nextensions = [\"py\"]\n\
             [servers.zig]\ncommand = [\"zls\"]\nextensions = [\"zig\"]\n",
        )
        .unwrap();
        assert_eq!(config.server_for(Path::new("a/b.py")).unwrap().1.command[0], "pyright-langserver");
        assert_eq!(config.server_for(Path::new("x.zig")).unwrap().0, "zig");
        assert_eq!(config.server_for(Path::new("x.rs")).unwrap().0, "rust");
        assert_eq!(config.timeout_secs, Some(5));
        assert!(LspConfig::parse("[servers.x]\ncommand = []\nextensions = []\n").is_err());
        assert!(LspConfig::parse("[servers.x]\ncommand = [\"a\"]\nextensions = []\nbogus = 1\n").is_err());
    }
}
