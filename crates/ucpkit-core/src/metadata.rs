//! Block metadata: semantic role, label, tags, summary, source location,
//! cached token count, timestamps and free-form custom values.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Metadata attached to every block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    /// Semantic role (heading2, paragraph, function ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// A short human name, unique labels can be referenced as `@label`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Free tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// A short summary of the block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Where the block came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceLocation>,
    /// Cached token count of the block's rendered text under the document's
    /// tokenizer; `None` until counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
    /// Creation and modification times.
    #[serde(default)]
    pub timestamps: Timestamps,
    /// Free-form key/values (front matter, external links, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub custom: BTreeMap<String, serde_json::Value>,
}

impl Metadata {
    /// Metadata with just a role.
    pub fn with_role(role: Role) -> Self {
        Metadata { role: Some(role), ..Metadata::default() }
    }
}

/// Creation and modification times in milliseconds since the Unix epoch
/// (0 when unknown).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timestamps {
    /// When the block was created.
    #[serde(default)]
    pub created_ms: i64,
    /// When the block was last modified.
    #[serde(default)]
    pub modified_ms: i64,
}

impl Timestamps {
    /// Both times set to `ms`.
    pub fn at(ms: i64) -> Self {
        Timestamps { created_ms: ms, modified_ms: ms }
    }
}

/// Where a block came from: a file relative to the corpus root and a
/// 1-based inclusive line range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLocation {
    /// Path relative to the indexed corpus, `/`-separated.
    pub file: Arc<str>,
    /// First line (1-based).
    pub start_line: u32,
    /// Last line (inclusive).
    pub end_line: u32,
}

macro_rules! roles {
    ($( $variant:ident => $name:literal ),* $(,)?) => {
        /// The semantic role of a block.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum Role {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
            /// Any other role, written as given.
            Custom(Box<str>),
        }

        impl Role {
            /// The role's name.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Role::$variant => $name, )*
                    Role::Custom(name) => name,
                }
            }

            /// Every built-in role, in declaration order.
            pub const BUILT_IN: &'static [Role] = &[$( Role::$variant, )*];
        }

        impl FromStr for Role {
            type Err = std::convert::Infallible;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Ok(match s.to_ascii_lowercase().as_str() {
                    $( $name => Role::$variant, )*
                    _ => Role::Custom(s.into()),
                })
            }
        }
    };
}

roles! {
    Heading1 => "heading1", Heading2 => "heading2", Heading3 => "heading3",
    Heading4 => "heading4", Heading5 => "heading5", Heading6 => "heading6",
    Paragraph => "paragraph", List => "list", Quote => "quote", Code => "code",
    Table => "table", Equation => "equation", Image => "image", Title => "title",
    Subtitle => "subtitle", Abstract => "abstract", Section => "section",
    Intro => "intro", Body => "body", Conclusion => "conclusion", Note => "note",
    Warning => "warning", Tip => "tip", Sidebar => "sidebar", Callout => "callout",
    Metadata => "metadata", Citation => "citation", Footnote => "footnote",
    Repository => "repository", Directory => "directory", File => "file",
    Module => "module", Class => "class", Struct => "struct", Enum => "enum",
    Trait => "trait", Interface => "interface", Function => "function",
    Method => "method", Constant => "constant", Variable => "variable",
    Field => "field", TypeAlias => "type_alias", Import => "import", Impl => "impl",
}

impl Role {
    /// The heading role of a level (1..=6; out-of-range levels clamp).
    pub fn heading(level: u8) -> Role {
        match level {
            0 | 1 => Role::Heading1,
            2 => Role::Heading2,
            3 => Role::Heading3,
            4 => Role::Heading4,
            5 => Role::Heading5,
            _ => Role::Heading6,
        }
    }

    /// Whether this role marks a definition in source code (a class,
    /// function, method ...), whose label is its name.
    pub fn is_code_symbol(&self) -> bool {
        matches!(
            self,
            Role::Module
                | Role::Class
                | Role::Struct
                | Role::Enum
                | Role::Trait
                | Role::Interface
                | Role::Impl
                | Role::Function
                | Role::Method
                | Role::Constant
                | Role::TypeAlias
        )
    }

    /// Whether this role marks code: a definition in source code or a
    /// code block (a file's code outside definitions, a document's sample).
    pub fn is_code(&self) -> bool {
        self.is_code_symbol() || *self == Role::Code
    }

    /// The heading level (1..=6) when this is a heading role.
    pub fn heading_level(&self) -> Option<u8> {
        match self {
            Role::Heading1 => Some(1),
            Role::Heading2 => Some(2),
            Role::Heading3 => Some(3),
            Role::Heading4 => Some(4),
            Role::Heading5 => Some(5),
            Role::Heading6 => Some(6),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        Ok(text.parse().unwrap_or_else(|never| match never {}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_round_trip_by_name() {
        for role in Role::BUILT_IN {
            assert_eq!(&role.as_str().parse::<Role>().unwrap(), role);
        }
        assert_eq!("Heading2".parse::<Role>().unwrap(), Role::Heading2);
        assert_eq!("glossary".parse::<Role>().unwrap(), Role::Custom("glossary".into()));
    }

    #[test]
    fn heading_levels_match_roles() {
        for level in 1..=6 {
            assert_eq!(Role::heading(level).heading_level(), Some(level));
        }
        assert_eq!(Role::Paragraph.heading_level(), None);
    }
}
