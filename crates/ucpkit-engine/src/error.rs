//! Why the engine refused a command. Every error leaves the document as it
//! was before the command.

use ucpkit_core::{BlockId, StructureError};

/// A refused command.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// No block has this id.
    #[error("block {0} not found")]
    BlockNotFound(BlockId),
    /// A symbolic `blk_name` that is not a full id and was never defined.
    #[error("{0} is not a block id (ids are blk_ + 24 hex digits) and no block of that name was imported")]
    UnknownName(String),
    /// No block has this label.
    #[error("no block is labelled {0:?}")]
    UnknownLabel(String),
    /// Several blocks share the label.
    #[error("{count} blocks are labelled {label:?}; use a block id")]
    AmbiguousLabel {
        /// The label.
        label: String,
        /// How many blocks carry it.
        count: usize,
    },
    /// Short ids need an id map, which only sessions keep.
    #[error("short id {0} is not known here (short ids come from CTX RENDER FORMAT=SHORT_IDS in a session)")]
    UnknownShortId(u32),
    /// The tree refused the change.
    #[error("{0}")]
    Structure(#[from] StructureError),
    /// The path names nothing editable in this block.
    #[error("path {path}: {reason}")]
    InvalidPath {
        /// The path as written.
        path: String,
        /// Why it does not apply.
        reason: String,
    },
    /// A value of the wrong kind for the operation.
    #[error("{0}")]
    InvalidValue(String),
    /// `MATCHES` with a pattern that is not a regular expression.
    #[error("invalid regular expression {pattern:?}: {reason}")]
    InvalidRegex {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// UNLINK of an edge that does not exist.
    #[error("no {edge_type} edge from {source_id} to {target}")]
    EdgeNotFound {
        /// Source block.
        source_id: BlockId,
        /// Edge type name.
        edge_type: String,
        /// Target block.
        target: BlockId,
    },
    /// SNAPSHOT CREATE with a name in use.
    #[error("snapshot {0:?} already exists (SNAPSHOT DELETE it first)")]
    SnapshotExists(String),
    /// No snapshot has this name.
    #[error("no snapshot named {0:?}")]
    SnapshotNotFound(String),
    /// A stored snapshot that does not parse.
    #[error("snapshot {name:?} is damaged: {reason}")]
    SnapshotDamaged {
        /// The snapshot.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// COMMIT or ROLLBACK with no open transaction.
    #[error("no transaction is open")]
    NoTransaction,
    /// COMMIT or ROLLBACK naming another transaction than the open one.
    #[error("the open transaction is {open:?}, not {named:?}")]
    TransactionMismatch {
        /// Name of the innermost open transaction.
        open: Option<String>,
        /// Name given to COMMIT or ROLLBACK.
        named: String,
    },
    /// A traversal or context command, which needs an agent session.
    #[error("{0} runs in an agent session, not against a bare document")]
    NeedsSession(&'static str),
    /// A command inside an ATOMIC group failed; the group was rolled back.
    #[error("command {index} of the ATOMIC group failed, nothing was changed: {source}")]
    Atomic {
        /// 1-based position of the failing command in the group.
        index: usize,
        /// Its error.
        source: Box<EngineError>,
    },
}

impl EngineError {
    /// A stable, machine-readable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::BlockNotFound(_) => "block_not_found",
            EngineError::UnknownName(_) => "unknown_name",
            EngineError::UnknownLabel(_) => "unknown_label",
            EngineError::AmbiguousLabel { .. } => "ambiguous_label",
            EngineError::UnknownShortId(_) => "unknown_short_id",
            EngineError::Structure(StructureError::Cycle { .. }) => "cycle",
            EngineError::Structure(StructureError::Root) => "root_immutable",
            EngineError::Structure(StructureError::PositionOutOfRange { .. }) => "position_out_of_range",
            EngineError::Structure(StructureError::DuplicateId(_)) => "duplicate_id",
            EngineError::Structure(StructureError::BlockNotFound(_)) => "block_not_found",
            EngineError::InvalidPath { .. } => "invalid_path",
            EngineError::InvalidValue(_) => "invalid_value",
            EngineError::InvalidRegex { .. } => "invalid_regex",
            EngineError::EdgeNotFound { .. } => "edge_not_found",
            EngineError::SnapshotExists(_) => "snapshot_exists",
            EngineError::SnapshotNotFound(_) => "snapshot_not_found",
            EngineError::SnapshotDamaged { .. } => "snapshot_damaged",
            EngineError::NoTransaction => "no_transaction",
            EngineError::TransactionMismatch { .. } => "transaction_mismatch",
            EngineError::NeedsSession(_) => "needs_session",
            EngineError::Atomic { .. } => "atomic_failed",
        }
    }

    pub(crate) fn path(path: &ucpkit_ucl::Path, reason: impl Into<String>) -> Self {
        EngineError::InvalidPath { path: path.to_string(), reason: reason.into() }
    }
}
