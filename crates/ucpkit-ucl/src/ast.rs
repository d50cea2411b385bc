//! The UCL syntax tree.
//!
//! Every node prints back to canonical UCL ([`crate::print`]) and parses to
//! an equal node. Spans are kept beside the tree ([`crate::Script::spans`]),
//! never inside it, so equality compares meaning only.

use serde::{Deserialize, Serialize};
use ucpkit_core::{BlockId, EdgeType};
pub use ucpkit_core::{CompressMethod, CtxDirection, Reason, RenderFormat};

/// A reference to a block as written in UCL.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "ref", content = "value", rename_all = "snake_case")]
pub enum BlockRef {
    /// A full id, `blk_` + 24 hex digits.
    Id(BlockId),
    /// A short id (`3`), valid where the session has an id map.
    Short(u32),
    /// `@label`: the block whose label this is (labels must be unique).
    Label(String),
    /// A symbolic `blk_name` that is not a full id (hand-written document
    /// forms use these; the importer gives them stable ids).
    Name(String),
}

/// A literal value (serialized as the JSON it stands for).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A number with a fraction or exponent.
    Float(f64),
    /// A string (quoted, or a bare word where a value is expected).
    String(String),
    /// `[a, b]`
    Array(Vec<Value>),
    /// `{"k": v}`, keys in written order.
    Object(Vec<(String, Value)>),
    /// `@blk_…` or `@label`: a block, standing for its id (the engine
    /// resolves labels; the parser makes only [`BlockRef::Id`] and
    /// [`BlockRef::Label`] here).
    Ref(BlockRef),
}

impl Value {
    /// The value as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => (*b).into(),
            Value::Int(i) => (*i).into(),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into),
            Value::String(s) => s.clone().into(),
            Value::Array(items) => items.iter().map(Value::to_json).collect(),
            Value::Object(entries) => {
                serde_json::Value::Object(entries.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
            Value::Ref(BlockRef::Id(id)) => id.to_string().into(),
            Value::Ref(other) => format!("@{other}").into(),
        }
    }

    /// Whether a `@block` reference occurs in the value.
    pub fn has_refs(&self) -> bool {
        match self {
            Value::Ref(_) => true,
            Value::Array(items) => items.iter().any(Value::has_refs),
            Value::Object(entries) => entries.iter().any(|(_, v)| v.has_refs()),
            _ => false,
        }
    }

    /// A value from JSON (numbers that fit become [`Value::Int`]).
    pub fn from_json(json: &serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(items) => Value::Array(items.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(map) => {
                // Keys in order, whatever order the build's JSON maps keep:
                // the same value always prints the same.
                let mut entries: Vec<(String, Value)> =
                    map.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(entries)
            }
        }
    }
}

impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(deserializer).map(|json| Value::from_json(&json))
    }
}

/// `key=value` pairs after `WITH` (or on a block definition).
pub type Properties = Vec<(String, Value)>;

/// A parsed script: the document form's three sections. A plain command
/// list has empty `structure` and `blocks`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UclDocument {
    /// `STRUCTURE` entries: parent and its ordered children.
    pub structure: Vec<StructureEntry>,
    /// `BLOCKS` definitions.
    pub blocks: Vec<BlockDef>,
    /// `COMMANDS`, or the whole script when it has no sections.
    pub commands: Vec<Command>,
}

/// `blk_parent: [blk_a, blk_b]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructureEntry {
    /// The parent.
    pub parent: BlockRef,
    /// Its children, in order.
    pub children: Vec<BlockRef>,
}

/// `<type> #<id> [key=value ...] [:: <content>]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockDef {
    /// The content type.
    pub content_type: ContentType,
    /// The block's id.
    pub id: BlockRef,
    /// Metadata and content properties.
    pub properties: Properties,
    /// The content; absent for composites.
    pub content: Option<ContentLiteral>,
}

/// The content type named in APPEND and block definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentType {
    /// Prose.
    Text,
    /// Source code.
    Code,
    /// A table.
    Table,
    /// A formula.
    Math,
    /// Media referenced by uri.
    Media,
    /// A JSON value.
    Json,
    /// Bytes, written as base64.
    Binary,
    /// A container.
    Composite,
}

/// Content written after `::`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentLiteral {
    /// A value: a string for text-like types, anything for JSON.
    Value(Value),
    /// `|a|b|` rows; the first row is the header.
    Table(Vec<Vec<String>>),
}

/// One UCL command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// `EDIT`
    Edit(Edit),
    /// `APPEND`
    Append(Append),
    /// `MOVE`
    Move(Move),
    /// `DELETE`
    Delete(Delete),
    /// `LINK`
    Link(Link),
    /// `UNLINK`
    Unlink(Unlink),
    /// `PRUNE`
    Prune(Prune),
    /// `FOLD`
    Fold(Fold),
    /// `SNAPSHOT ...`
    Snapshot(Snapshot),
    /// `BEGIN TRANSACTION`, `COMMIT`, `ROLLBACK`
    Transaction(Transaction),
    /// `ATOMIC { ... }`
    Atomic(Atomic),
    /// `GOTO`
    Goto(Goto),
    /// `BACK`
    Back(Back),
    /// `EXPAND`
    Expand(Expand),
    /// `FOLLOW`
    Follow(Follow),
    /// `PATH`
    Path(PathQuery),
    /// `SEARCH`
    Search(Search),
    /// `FIND`
    Find(Find),
    /// `VIEW`
    View(View),
    /// `CTX ...`
    Ctx(Ctx),
}

impl Command {
    /// The command's keyword as written in errors (`EDIT`, `CTX ADD` ...).
    pub fn name(&self) -> &'static str {
        match self {
            Command::Edit(_) => "EDIT",
            Command::Append(_) => "APPEND",
            Command::Move(_) => "MOVE",
            Command::Delete(_) => "DELETE",
            Command::Link(_) => "LINK",
            Command::Unlink(_) => "UNLINK",
            Command::Prune(_) => "PRUNE",
            Command::Fold(_) => "FOLD",
            Command::Snapshot(_) => "SNAPSHOT",
            Command::Transaction(Transaction::Begin { .. }) => "BEGIN TRANSACTION",
            Command::Transaction(Transaction::Commit { .. }) => "COMMIT",
            Command::Transaction(Transaction::Rollback { .. }) => "ROLLBACK",
            Command::Atomic(_) => "ATOMIC",
            Command::Goto(_) => "GOTO",
            Command::Back(_) => "BACK",
            Command::Expand(_) => "EXPAND",
            Command::Follow(_) => "FOLLOW",
            Command::Path(_) => "PATH",
            Command::Search(_) => "SEARCH",
            Command::Find(_) => "FIND",
            Command::View(_) => "VIEW",
            Command::Ctx(ctx) => ctx.name(),
        }
    }

    /// Replaces the short ids (`3`) the command names by the full ids
    /// `ids` maps them to; fails, naming it, on the first short id the map
    /// does not know.
    pub fn expand_short_ids(&mut self, ids: &ucpkit_core::IdMapper) -> Result<(), u32> {
        let mut unknown = None;
        self.for_each_ref_mut(&mut |r| {
            if let BlockRef::Short(n) = *r {
                match ids.full(n) {
                    Some(id) => *r = BlockRef::Id(id),
                    None => {
                        unknown.get_or_insert(n);
                    }
                }
            }
        });
        unknown.map_or(Ok(()), Err)
    }

    /// Whether the command changes the document (and so needs the engine).
    pub fn is_edit(&self) -> bool {
        matches!(
            self,
            Command::Edit(_)
                | Command::Append(_)
                | Command::Move(_)
                | Command::Delete(_)
                | Command::Link(_)
                | Command::Unlink(_)
                | Command::Prune(_)
                | Command::Fold(_)
                | Command::Snapshot(_)
                | Command::Transaction(_)
                | Command::Atomic(_)
        )
    }
}

/// `EDIT <id> SET <path> <op> [<value>] [WHERE <cond>]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edit {
    /// The block to change.
    pub target: BlockRef,
    /// What to change in it.
    pub path: Path,
    /// How to change it.
    pub op: EditOp,
    /// Only change the block when it matches.
    pub condition: Option<Condition>,
}

/// The operator of an EDIT.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", content = "value", rename_all = "snake_case")]
pub enum EditOp {
    /// `= value`
    Set(Value),
    /// `+= value`: append to a string or array, add to a number.
    Append(Value),
    /// `-= value`: remove from a string or array, subtract from a number.
    Remove(Value),
    /// `++`
    Increment,
    /// `--`
    Decrement,
}

/// A path into a block: `content.text`, `metadata.tags[0]`, `rows[1:3]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Path(pub Vec<PathSegment>);

/// One step of a [`Path`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathSegment {
    /// A named field.
    Field(String),
    /// `[i]` (negative counts from the end).
    Index(i64),
    /// `[a:b]`, either end optional.
    Slice(Option<i64>, Option<i64>),
}

/// A WHERE condition. `And` and `Or` are n-ary (a chain `a OR b OR c` is
/// one node with three operands), hold at least two operands, and nest only
/// where the source had parentheses, so a tree's depth is bounded by
/// [`crate::MAX_NESTING`] whatever its size. Deserializing refuses deeper
/// trees and operand lists shorter than two.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// `path <op> value`
    Compare {
        /// Left side.
        path: Path,
        /// Operator.
        op: CompareOp,
        /// Right side.
        value: Value,
    },
    /// `path EXISTS`, `path IS_NULL` ...
    Check {
        /// What is checked.
        path: Path,
        /// The check.
        check: Check,
    },
    /// A bare path: true when the value is truthy.
    Truthy(Path),
    /// `NOT c`
    Not(Box<Condition>),
    /// `a AND b AND ...`
    And(Vec<Condition>),
    /// `a OR b OR ...`
    Or(Vec<Condition>),
}

impl Condition {
    /// Levels of nesting: 1 for a comparison, one more for each NOT and
    /// each AND/OR around it. Computed without recursion, so it is safe on
    /// any tree.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 1)];
        while let Some((condition, depth)) = stack.pop() {
            deepest = deepest.max(depth);
            match condition {
                Condition::Not(inner) => stack.push((inner, depth + 1)),
                Condition::And(terms) | Condition::Or(terms) => stack.extend(terms.iter().map(|t| (t, depth + 1))),
                Condition::Compare { .. } | Condition::Check { .. } | Condition::Truthy(_) => {}
            }
        }
        deepest
    }
}

/// How a [`Condition`] is read from serde: the derived form, whose
/// operands come back through [`Condition`]'s own `Deserialize` (counting
/// depth), checked for arity.
#[derive(Deserialize)]
#[serde(rename = "Condition", rename_all = "snake_case")]
enum ConditionForm {
    Compare { path: Path, op: CompareOp, value: Value },
    Check { path: Path, check: Check },
    Truthy(Path),
    Not(Box<Condition>),
    And(Vec<Condition>),
    Or(Vec<Condition>),
}

thread_local! {
    /// Conditions being deserialized on this thread, innermost last.
    static DESERIALIZING_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Leaves one level of [`DESERIALIZING_DEPTH`] on every exit path.
struct DepthLevel;

impl Drop for DepthLevel {
    fn drop(&mut self) {
        DESERIALIZING_DEPTH.with(|d| d.set(d.get() - 1));
    }
}

impl<'de> Deserialize<'de> for Condition {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let depth = DESERIALIZING_DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        let _level = DepthLevel;
        if depth > crate::MAX_NESTING {
            return Err(D::Error::custom(format!("condition nested deeper than {} levels", crate::MAX_NESTING)));
        }
        Ok(match ConditionForm::deserialize(deserializer)? {
            ConditionForm::Compare { path, op, value } => Condition::Compare { path, op, value },
            ConditionForm::Check { path, check } => Condition::Check { path, check },
            ConditionForm::Truthy(path) => Condition::Truthy(path),
            ConditionForm::Not(inner) => Condition::Not(inner),
            ConditionForm::And(terms) | ConditionForm::Or(terms) if terms.len() < 2 => {
                return Err(D::Error::custom("AND and OR need at least two operands"));
            }
            ConditionForm::And(terms) => Condition::And(terms),
            ConditionForm::Or(terms) => Condition::Or(terms),
        })
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareOp {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `CONTAINS`
    Contains,
    /// `STARTS_WITH`
    StartsWith,
    /// `ENDS_WITH`
    EndsWith,
    /// `MATCHES` (a regular expression)
    Matches,
}

/// A unary check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// `EXISTS`
    Exists,
    /// `IS_NULL`
    IsNull,
    /// `IS_NOT_NULL`
    IsNotNull,
    /// `IS_EMPTY`
    IsEmpty,
}

/// `APPEND <parent> <type> [AT n] [WITH k=v ...] [:: content]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Append {
    /// Where the new block goes.
    pub parent: BlockRef,
    /// Its content type.
    pub content_type: ContentType,
    /// Child position; the end when absent.
    pub at: Option<u32>,
    /// Properties (label, role, tags, lang ...).
    pub properties: Properties,
    /// The content; absent for composites.
    pub content: Option<ContentLiteral>,
}

/// `MOVE <id> TO <parent> [AT n] | BEFORE <sib> | AFTER <sib>`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Move {
    /// The block to move (with its subtree).
    pub block: BlockRef,
    /// Where it goes.
    pub destination: MoveDestination,
}

/// Where a MOVE puts a block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveDestination {
    /// `TO <parent> [AT n]`
    To {
        /// The new parent.
        parent: BlockRef,
        /// Child position; the end when absent.
        at: Option<u32>,
    },
    /// `BEFORE <sibling>`
    Before(BlockRef),
    /// `AFTER <sibling>`
    After(BlockRef),
}

/// `DELETE [<id>] [CASCADE|PRESERVE_CHILDREN] [WHERE <cond>]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delete {
    /// The block; absent for `DELETE WHERE`.
    pub target: Option<BlockRef>,
    /// What happens to children.
    pub mode: DeleteMode,
    /// Which blocks (with a target: only when it matches).
    pub condition: Option<Condition>,
}

/// What DELETE does with a block's children.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeleteMode {
    /// The children stay, unreachable (PRUNE UNREACHABLE removes them).
    #[default]
    Orphan,
    /// `CASCADE`: the whole subtree goes.
    Cascade,
    /// `PRESERVE_CHILDREN`: children take the block's place.
    PreserveChildren,
}

/// `LINK <src> <type> <dst> [WITH k=v ...]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// Where the edge starts.
    pub source: BlockRef,
    /// The relation.
    pub edge_type: EdgeType,
    /// Where it points.
    pub target: BlockRef,
    /// Edge metadata (confidence, note, anything else).
    pub properties: Properties,
}

/// `UNLINK <src> <type> <dst>`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unlink {
    /// Where the edge starts.
    pub source: BlockRef,
    /// The relation.
    pub edge_type: EdgeType,
    /// Where it points.
    pub target: BlockRef,
}

/// `PRUNE UNREACHABLE|WHERE <cond> [DRY_RUN]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prune {
    /// What goes.
    pub target: PruneTarget,
    /// Report without removing.
    pub dry_run: bool,
}

/// What PRUNE removes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PruneTarget {
    /// Blocks not reachable from the root.
    Unreachable,
    /// Blocks matching a condition (with their subtrees).
    Where(Condition),
}

/// `FOLD <id> [DEPTH n] [MAX_TOKENS n] [PRESERVE_TAGS [..]]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fold {
    /// The subtree to fold.
    pub target: BlockRef,
    /// Keep this many levels below the target open.
    pub depth: Option<u32>,
    /// Keep blocks open, in document order, while they fit this many tokens.
    pub max_tokens: Option<u32>,
    /// Blocks with any of these tags are never folded.
    pub preserve_tags: Vec<String>,
}

/// `SNAPSHOT ...`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Snapshot {
    /// `CREATE "name" [WITH description="..."]`
    Create {
        /// Snapshot name.
        name: String,
        /// Properties (description).
        properties: Properties,
    },
    /// `RESTORE "name"`
    Restore(String),
    /// `DELETE "name"`
    Delete(String),
    /// `LIST`
    List,
    /// `DIFF "a" "b"`
    Diff(String, String),
}

/// Transaction control.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transaction {
    /// `BEGIN TRANSACTION ["name"]`
    Begin {
        /// Optional name.
        name: Option<String>,
    },
    /// `COMMIT ["name"]`
    Commit {
        /// Optional name.
        name: Option<String>,
    },
    /// `ROLLBACK ["name"]`
    Rollback {
        /// Optional name.
        name: Option<String>,
    },
}

/// `ATOMIC { ... }`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Atomic {
    /// The grouped commands.
    pub commands: Vec<Command>,
}

/// `GOTO <id>`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Goto {
    /// Where the cursor goes.
    pub target: BlockRef,
}

/// `BACK [n]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Back {
    /// Steps back (1 when absent).
    pub steps: Option<u32>,
}

/// Direction of EXPAND.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Ancestors.
    Up,
    /// Descendants.
    Down,
    /// Both.
    Both,
    /// Semantically related blocks.
    Semantic,
}

/// How much of a block a view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViewMode {
    /// Everything.
    Full,
    /// The first characters.
    Preview,
    /// Label, tags, counts.
    Metadata,
    /// Id and role.
    Ids,
    /// Chosen per block from its relevance to the session task.
    Adaptive,
}

/// `EXPAND <id> UP|DOWN|BOTH|SEMANTIC [DEPTH=n] [MODE=m] [ROLES=..] [TAGS=..] [TOKENS=n]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expand {
    /// Where to expand from.
    pub target: BlockRef,
    /// Which way.
    pub direction: Direction,
    /// How far.
    pub depth: Option<u32>,
    /// How results are shown.
    pub mode: Option<ViewMode>,
    /// Only these roles.
    pub roles: Vec<String>,
    /// Only these tags.
    pub tags: Vec<String>,
    /// Token budget for the expansion.
    pub tokens: Option<u32>,
}

/// `FOLLOW <id> <type>[,<type>...] [<target>]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Follow {
    /// Where the edges start.
    pub source: BlockRef,
    /// Edge types to follow.
    pub edge_types: Vec<EdgeType>,
    /// Only this target.
    pub target: Option<BlockRef>,
}

/// `PATH <from> TO <to> [MAX=n]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathQuery {
    /// Start.
    pub from: BlockRef,
    /// End.
    pub to: BlockRef,
    /// Longest path accepted.
    pub max: Option<u32>,
}

/// `SEARCH "<query>" [LIMIT=n] [MIN_SIMILARITY=x] [ROLES=..] [TAGS=..]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Search {
    /// The query text.
    pub query: String,
    /// Most results.
    pub limit: Option<u32>,
    /// Lowest normalized score kept.
    pub min_similarity: Option<f64>,
    /// Only these roles.
    pub roles: Vec<String>,
    /// Only these tags.
    pub tags: Vec<String>,
}

/// `FIND [ROLE=r] [TAG=t] [LABEL=l] [PATTERN="regex"]`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Find {
    /// Role filter.
    pub role: Option<String>,
    /// Tag filter.
    pub tag: Option<String>,
    /// Label filter.
    pub label: Option<String>,
    /// Regular expression over the block text.
    pub pattern: Option<String>,
}

/// `VIEW <id> [MODE=m] | VIEW NEIGHBORHOOD [DEPTH=n] [MODE=m] | VIEW MAP [TOKENS=n]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct View {
    /// What to view.
    pub target: ViewTarget,
    /// How much to show.
    pub mode: Option<ViewMode>,
}

/// What VIEW shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViewTarget {
    /// One block.
    Block(BlockRef),
    /// The cursor's neighbourhood.
    Neighborhood {
        /// How far.
        depth: Option<u32>,
    },
    /// The repository map: source files ranked by the code graph around
    /// what the session is looking at, with their key signatures.
    Map {
        /// Most tokens of the map.
        tokens: Option<u32>,
    },
}

/// `CTX ...`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ctx", rename_all = "snake_case")]
pub enum Ctx {
    /// `CTX ADD <id> [REASON=r|"free text"] [RELEVANCE=x]`
    Add {
        /// The block.
        target: BlockRef,
        /// Why. A free-text reason is [`Reason::AgentDecision`] with the
        /// text in `note`.
        reason: Option<Reason>,
        /// How relevant (0..1).
        relevance: Option<f64>,
        /// The agent's own words for why (`REASON="..."` that names no
        /// reason); never one of the reason names.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// `CTX ADD RESULTS`
    AddResults,
    /// `CTX ADD CHILDREN <id>`
    AddChildren {
        /// Whose children.
        parent: BlockRef,
    },
    /// `CTX ADD PATH <a> TO <b>`
    AddPath {
        /// Start.
        from: BlockRef,
        /// End.
        to: BlockRef,
    },
    /// `CTX REMOVE <id>`
    Remove {
        /// The block.
        target: BlockRef,
    },
    /// `CTX CLEAR`
    Clear,
    /// `CTX EXPAND <dir> [DEPTH=n] [TOKENS=n]`
    Expand {
        /// Which way.
        direction: CtxDirection,
        /// How far.
        depth: Option<u32>,
        /// Token budget.
        tokens: Option<u32>,
    },
    /// `CTX COMPRESS METHOD=m`
    Compress {
        /// How.
        method: CompressMethod,
    },
    /// `CTX PRUNE [MIN_RELEVANCE=x] [MAX_AGE=s]`
    Prune {
        /// Drop blocks below this relevance.
        min_relevance: Option<f64>,
        /// Drop blocks not touched for this many seconds.
        max_age: Option<u64>,
    },
    /// `CTX RENDER [FORMAT=f]`
    Render {
        /// Output format.
        format: Option<RenderFormat>,
    },
    /// `CTX STATS`
    Stats,
    /// `CTX FOCUS <id>` / `CTX FOCUS CLEAR`
    Focus {
        /// The focus block; `None` clears it.
        target: Option<BlockRef>,
    },
}

impl Ctx {
    /// The subcommand's keywords (`CTX ADD`, `CTX ADD RESULTS` ...).
    pub fn name(&self) -> &'static str {
        match self {
            Ctx::Add { .. } => "CTX ADD",
            Ctx::AddResults => "CTX ADD RESULTS",
            Ctx::AddChildren { .. } => "CTX ADD CHILDREN",
            Ctx::AddPath { .. } => "CTX ADD PATH",
            Ctx::Remove { .. } => "CTX REMOVE",
            Ctx::Clear => "CTX CLEAR",
            Ctx::Expand { .. } => "CTX EXPAND",
            Ctx::Compress { .. } => "CTX COMPRESS",
            Ctx::Prune { .. } => "CTX PRUNE",
            Ctx::Render { .. } => "CTX RENDER",
            Ctx::Stats => "CTX STATS",
            Ctx::Focus { .. } => "CTX FOCUS",
        }
    }
}

impl Command {
    /// Calls `f` on every block reference in the command (ATOMIC groups
    /// included), for resolving or rewriting them.
    pub fn for_each_ref_mut(&mut self, f: &mut impl FnMut(&mut BlockRef)) {
        match self {
            Command::Edit(edit) => f(&mut edit.target),
            Command::Append(append) => f(&mut append.parent),
            Command::Move(mv) => {
                f(&mut mv.block);
                match &mut mv.destination {
                    MoveDestination::To { parent, .. } => f(parent),
                    MoveDestination::Before(sibling) | MoveDestination::After(sibling) => f(sibling),
                }
            }
            Command::Delete(delete) => delete.target.iter_mut().for_each(f),
            Command::Link(Link { source, target, .. }) | Command::Unlink(Unlink { source, target, .. }) => {
                f(source);
                f(target);
            }
            Command::Fold(fold) => f(&mut fold.target),
            Command::Atomic(atomic) => atomic.commands.iter_mut().for_each(|c| c.for_each_ref_mut(f)),
            Command::Goto(goto) => f(&mut goto.target),
            Command::Expand(expand) => f(&mut expand.target),
            Command::Follow(follow) => {
                f(&mut follow.source);
                follow.target.iter_mut().for_each(f);
            }
            Command::Path(path) => {
                f(&mut path.from);
                f(&mut path.to);
            }
            Command::View(View { target: ViewTarget::Block(target), .. }) => f(target),
            Command::Ctx(ctx) => match ctx {
                Ctx::Add { target, .. } | Ctx::Remove { target } | Ctx::AddChildren { parent: target } => f(target),
                Ctx::AddPath { from, to } => {
                    f(from);
                    f(to);
                }
                Ctx::Focus { target } => target.iter_mut().for_each(f),
                _ => {}
            },
            Command::Prune(_)
            | Command::Snapshot(_)
            | Command::Transaction(_)
            | Command::Back(_)
            | Command::Search(_)
            | Command::Find(_)
            | Command::View(_) => {}
        }
    }
}
