//! Why the window refused a change. A refused change leaves the window as
//! it was.

use ucpkit_core::BlockId;

/// A refused window change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WindowError {
    /// The block is not in the document.
    #[error("block {0} not found")]
    BlockNotFound(BlockId),
    /// CTX REMOVE of a block the window does not hold.
    #[error("block {0} is not in the context window")]
    NotInWindow(BlockId),
    /// Not even a structure-only stub of the block fits the budget.
    #[error(
        "context limit: {id} needs {needed} tokens even as a stub, the window holds {tokens}/{max_tokens} tokens and {blocks}/{max_blocks} blocks"
    )]
    ContextLimitExceeded {
        /// The block that did not fit.
        id: BlockId,
        /// Tokens its smallest representation costs.
        needed: usize,
        /// Tokens in the window.
        tokens: usize,
        /// The token budget.
        max_tokens: usize,
        /// Blocks in the window.
        blocks: usize,
        /// The block budget.
        max_blocks: usize,
    },
}
