//! `ucp tui`: a terminal home for people over the workspace. A navigator
//! of the store's documents and block trees (search, UCL in a session,
//! edges to follow), a context builder (the `ucp context` window with a
//! budget bar, changed by hand, copied, saved as a session), an agent
//! pane (streamed text, folded tool calls, permission requests), the
//! memory, plans and sessions, and a command palette with the model
//! pickers. It holds no logic of its own: documents come from
//! [`ucpkit_workspace::Library`], the agent's turns from an
//! [`AgentBackend`] the binary gives, which runs them through the tool
//! registry's gate.
//!
//! State and drawing are kept apart from the terminal: [`App`] takes keys
//! and job messages, [`draw`] draws it into any ratatui backend (the
//! tests' `TestBackend` too), and [`run`] drives both on a real terminal.

mod agent_pane;
mod app;
mod builder;
mod clipboard;
mod draw;
mod input;
mod jobs;
mod keys;
mod models;
mod navigator;
mod palette;
mod screens;
mod terminal;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

pub use agent_pane::{AgentBackend, AgentNews};
pub use app::App;
pub use draw::draw;
pub use terminal::{run, Options};
