//! The context window: admission under hard budgets, compaction, pruning,
//! focus and task, and resynchronisation after the document changes; which
//! entries leave when it is over budget is `evict`'s.
//!
//! Invariant: after every public method returns, the rendering the budget
//! counts ([`WindowConfig::budget_format`], by default the one with ids) has
//! at most `max_tokens` tokens and at most `max_blocks` entries.

use std::collections::{BTreeMap, HashMap, VecDeque};
use ucpkit_core::outline;

use crate::Reason;
use serde::{Deserialize, Serialize};
use ucpkit_core::{BlockId, Document, Tokenizer};

use crate::entry::{base_score, Entry, Representation};
use crate::error::WindowError;
use crate::evict::PruningPolicy;
use crate::relevance::{self, Signals, Task};
use crate::segment::{BudgetFormat, Builder};
use crate::summarize::Summarizer;

/// Budgets and tuning of a window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WindowConfig {
    /// Token budget of the rendered window (default format).
    pub max_tokens: usize,
    /// Most entries.
    pub max_blocks: usize,
    /// Eviction order.
    pub policy: PruningPolicy,
    /// Tokens a truncated block keeps.
    pub truncate_tokens: usize,
    /// Tokens a summary may use.
    pub summary_tokens: usize,
    /// Half-life of the recency signal, in milliseconds.
    pub recency_half_life_ms: i64,
    /// Threshold of CTX PRUNE without parameters.
    pub min_relevance: f64,
    /// The rendering the token budget bounds (default: with ids).
    pub budget_format: BudgetFormat,
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            max_tokens: 8000,
            max_blocks: 200,
            policy: PruningPolicy::RelevanceFirst,
            truncate_tokens: 64,
            summary_tokens: 48,
            recency_half_life_ms: 5 * 60 * 1000,
            min_relevance: 0.3,
            budget_format: BudgetFormat::Ids,
        }
    }
}

/// What a window operation may read.
pub struct Env<'a> {
    /// The document the window shows.
    pub doc: &'a Document,
    /// Exact token counts.
    pub tokenizer: &'a dyn Tokenizer,
    /// Summaries for COMPRESS METHOD=SUMMARIZE.
    pub summarizer: &'a dyn Summarizer,
    /// Now, in ms since the Unix epoch.
    pub now_ms: i64,
}

/// Why an entry left the window or changed representation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// CTX REMOVE.
    Removed,
    /// CTX CLEAR.
    Cleared,
    /// Made room for another block.
    Evicted {
        /// The policy that chose it.
        policy: PruningPolicy,
    },
    /// CTX PRUNE.
    Pruned {
        /// The rule it failed (`min_relevance` or `max_age`).
        rule: String,
    },
    /// The block was deleted from the document.
    Deleted,
    /// Shown smaller to stay within budget.
    Degraded {
        /// Before.
        from: Representation,
        /// After.
        to: Representation,
    },
    /// CTX COMPRESS.
    Compressed {
        /// Before.
        from: Representation,
        /// After.
        to: Representation,
    },
}

impl Action {
    /// The action's name in stats.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Removed => "removed",
            Action::Cleared => "cleared",
            Action::Evicted { .. } => "evicted",
            Action::Pruned { .. } => "pruned",
            Action::Deleted => "deleted",
            Action::Degraded { .. } => "degraded",
            Action::Compressed { .. } => "compressed",
        }
    }
}

/// One recorded change (the window keeps the last [`LOG_LEN`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The block; it can always be added back with CTX ADD.
    pub id: BlockId,
    /// What happened.
    #[serde(flatten)]
    pub action: Action,
    /// Tokens it held before.
    pub tokens_before: usize,
    /// Tokens it holds after (0 when it left).
    pub tokens_after: usize,
    /// When (ms since the Unix epoch).
    pub at_ms: i64,
}

/// Changes kept in the log.
pub const LOG_LEN: usize = 100;

/// The result of adding one block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Admitted {
    /// The block.
    pub id: BlockId,
    /// How it is shown now.
    pub representation: Representation,
    /// Whether it was already in the window.
    pub already_present: bool,
    /// Entries evicted to make room.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evicted: Vec<BlockId>,
}

/// A session's context window.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ContextWindow {
    pub(crate) config: WindowConfig,
    /// Entries in document order.
    pub(crate) entries: Vec<Entry>,
    pub(crate) focus: Option<BlockId>,
    #[serde(with = "task_text")]
    pub(crate) task: Option<Task>,
    pub(crate) log: VecDeque<Change>,
    pub(crate) removed: BTreeMap<String, usize>,
    pub(crate) total_tokens: usize,
    /// Document version the entries were computed for (`None` after loading).
    #[serde(skip)]
    pub(crate) synced_version: Option<u64>,
    #[serde(skip)]
    pub(crate) header_tokens: HashMap<(Vec<BlockId>, Option<String>), usize>,
}

mod task_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::relevance::Task;

    pub fn serialize<S: Serializer>(task: &Option<Task>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_some(&task.as_ref().map(Task::text))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Task>, D::Error> {
        Ok(Option::<String>::deserialize(d)?.map(|t| Task::new(&t)))
    }
}

impl ContextWindow {
    /// An empty window.
    pub fn new(config: WindowConfig) -> Self {
        ContextWindow { config, ..ContextWindow::default() }
    }

    /// Budgets and tuning.
    pub fn config(&self) -> &WindowConfig {
        &self.config
    }

    /// Entries in document order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry of a block.
    pub fn get(&self, id: BlockId) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the window is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Tokens of the default rendering.
    pub fn tokens(&self) -> usize {
        self.total_tokens
    }

    /// The focus block.
    pub fn focus(&self) -> Option<BlockId> {
        self.focus
    }

    /// The task relevance is measured against.
    pub fn task(&self) -> Option<&str> {
        self.task.as_ref().map(Task::text)
    }

    /// The task's terms, for similarity scoring.
    pub fn task_terms(&self) -> Option<&Task> {
        self.task.as_ref()
    }

    /// Recent changes, oldest first.
    pub fn log(&self) -> impl Iterator<Item = &Change> {
        self.log.iter()
    }

    /// Brings cached facts up to date with the document (entries of deleted
    /// blocks leave, token counts and order are recomputed) and enforces
    /// the budget. Cheap when the document did not change.
    pub fn sync(&mut self, env: &Env) {
        if self.synced_version == Some(env.doc.version()) {
            return;
        }
        self.header_tokens.clear();
        let builder = self.builder(env);
        let mut gone = Vec::new();
        for entry in &mut self.entries {
            if !env.doc.contains(entry.id) {
                gone.push((entry.id, entry.tokens));
                continue;
            }
            if builder.show(entry.id, entry.representation).is_none() {
                entry.representation = Representation::Full;
            }
            refresh(entry, &builder, self.task.as_ref());
        }
        self.entries.retain(|e| env.doc.contains(e.id));
        if self.focus.is_some_and(|f| !env.doc.contains(f)) {
            self.focus = None;
        }
        for (id, tokens) in gone {
            self.record(id, Action::Deleted, tokens, 0, env.now_ms);
        }
        self.entries.sort_by(|a, b| a.order.cmp(&b.order));
        self.synced_version = Some(env.doc.version());
        self.recount(env);
        self.enforce(env);
    }

    /// Changes the budgets, shrinking the window at once if needed.
    pub fn set_limits(&mut self, env: &Env, max_tokens: usize, max_blocks: usize) {
        self.sync(env);
        self.config.max_tokens = max_tokens;
        self.config.max_blocks = max_blocks;
        self.enforce(env);
    }

    /// Sets the pruning policy.
    pub fn set_policy(&mut self, policy: PruningPolicy) {
        self.config.policy = policy;
    }

    /// Sets the task before any entry exists (no document needed).
    pub fn set_task_text(&mut self, task: Option<&str>) {
        self.task = task.filter(|t| !t.trim().is_empty()).map(Task::new);
        for entry in &mut self.entries {
            entry.task_score = None;
        }
        self.synced_version = None;
    }

    /// Sets (or clears) the task relevance is measured against.
    pub fn set_task(&mut self, env: &Env, task: Option<&str>) {
        self.sync(env);
        self.task = task.filter(|t| !t.trim().is_empty()).map(Task::new);
        let builder = self.builder(env);
        for entry in &mut self.entries {
            entry.task_score = task_score(&builder, entry.id, &entry.path, self.task.as_ref());
        }
    }

    /// Sets (or clears) the focus; the focus and its ancestors are never
    /// pruned while it holds.
    pub fn set_focus(&mut self, env: &Env, focus: Option<BlockId>) -> Result<(), WindowError> {
        if let Some(id) = focus {
            if !env.doc.contains(id) {
                return Err(WindowError::BlockNotFound(id));
            }
        }
        self.sync(env);
        self.focus = focus;
        if let Some(entry) = focus.and_then(|id| self.entries.iter_mut().find(|e| e.id == id)) {
            entry.accessed_ms = env.now_ms;
            entry.access_count += 1;
        }
        Ok(())
    }

    /// Adds a block (or opens one already present to its full form),
    /// evicting less relevant entries by the policy or showing it smaller
    /// when it does not fit. Fails, changing nothing, when not even a stub fits.
    pub fn add(
        &mut self,
        env: &Env,
        id: BlockId,
        reason: Reason,
        relevance: Option<f64>,
    ) -> Result<Admitted, WindowError> {
        self.admit(env, id, reason, relevance, Representation::Full, true)
    }

    /// Adds a block shown exactly as `representation` when that fits
    /// without evicting anything; `Ok(None)` (and the window unchanged) when
    /// it does not, or when that representation would not be smaller than
    /// the block in full. A block already present is left as it is.
    pub fn add_if_fits(
        &mut self,
        env: &Env,
        id: BlockId,
        reason: Reason,
        relevance: f64,
        representation: Representation,
    ) -> Result<Option<Admitted>, WindowError> {
        if !env.doc.contains(id) {
            return Err(WindowError::BlockNotFound(id));
        }
        self.sync(env);
        if let Some(index) = self.index_of(id) {
            let representation = self.entries[index].representation;
            return Ok(Some(Admitted { id, representation, already_present: true, evicted: Vec::new() }));
        }
        let builder = self.builder(env);
        if builder.show(id, representation).is_none() {
            return Ok(None);
        }
        let entry = self.new_entry(&builder, id, reason, relevance.clamp(0.0, 1.0), representation, env.now_ms);
        Ok(self.try_insert(env, entry, 0.0, false).map(|evicted| Admitted {
            id,
            representation,
            already_present: false,
            evicted,
        }))
    }

    /// [`ContextWindow::add`] with control over the fullest representation
    /// tried and whether other entries may be evicted.
    pub(crate) fn admit(
        &mut self,
        env: &Env,
        id: BlockId,
        reason: Reason,
        relevance: Option<f64>,
        preferred: Representation,
        may_evict: bool,
    ) -> Result<Admitted, WindowError> {
        if !env.doc.contains(id) {
            return Err(WindowError::BlockNotFound(id));
        }
        self.sync(env);
        let stated = relevance.map_or(base_score(reason), |r| r.clamp(0.0, 1.0));
        if let Some(index) = self.index_of(id) {
            return Ok(self.reopen(env, index, reason, stated, preferred));
        }
        let builder = self.builder(env);
        let entry = self.new_entry(&builder, id, reason, stated, preferred, env.now_ms);
        let smallest = entry.tokens;
        let floor = self.score(env, &entry);
        let ladder = Representation::ALL.iter().copied().filter(|r| *r >= preferred && *r != Representation::Summary);
        for representation in ladder {
            if builder.show(id, representation).is_none() {
                continue;
            }
            let mut candidate = entry.clone();
            candidate.representation = representation;
            refresh(&mut candidate, &builder, self.task.as_ref());
            if let Some(evicted) = self.try_insert(env, candidate, floor, may_evict) {
                return Ok(Admitted { id, representation, already_present: false, evicted });
            }
        }
        Err(WindowError::ContextLimitExceeded {
            id,
            needed: smallest.min(self.stub_tokens(env, id)),
            tokens: self.total_tokens,
            max_tokens: self.config.max_tokens,
            blocks: self.entries.len(),
            max_blocks: self.config.max_blocks,
        })
    }

    /// Touches an entry already present and tries to show it fuller.
    fn reopen(&mut self, env: &Env, index: usize, reason: Reason, stated: f64, preferred: Representation) -> Admitted {
        let entry = &mut self.entries[index];
        entry.accessed_ms = env.now_ms;
        entry.access_count += 1;
        if stated > entry.relevance {
            entry.relevance = stated;
            entry.reason = reason;
        }
        let current = entry.clone();
        let mut admitted =
            Admitted { id: current.id, representation: current.representation, already_present: true, evicted: vec![] };
        if preferred >= current.representation {
            return admitted;
        }
        let builder = self.builder(env);
        let floor = self.score(env, &current);
        let removed = self.entries.remove(index);
        self.recount(env);
        for representation in Representation::ALL.into_iter().filter(|r| *r >= preferred && *r < current.representation)
        {
            if builder.show(current.id, representation).is_none() {
                continue;
            }
            let mut candidate = current.clone();
            candidate.representation = representation;
            refresh(&mut candidate, &builder, self.task.as_ref());
            if let Some(evicted) = self.try_insert(env, candidate, floor, true) {
                admitted.representation = representation;
                admitted.evicted = evicted;
                return admitted;
            }
        }
        self.entries.insert(index, removed);
        self.recount(env);
        admitted
    }

    /// Inserts `entry`, evicting entries no more relevant than `floor` when
    /// allowed, if that brings the window within budget. On failure the
    /// window is unchanged and `None` is returned.
    fn try_insert(&mut self, env: &Env, entry: Entry, floor: f64, may_evict: bool) -> Option<Vec<BlockId>> {
        let id = entry.id;
        let before = self.total_tokens;
        self.insert_sorted(entry);
        self.recount(env);
        if self.within_budget() {
            return Some(Vec::new());
        }
        // Over budget: evict in policy order, putting everything back if
        // even that does not make room.
        let mut evicted = Vec::new();
        if may_evict {
            for victim in self.victims(env, Some(floor), Some(id)) {
                let index = self.index_of(victim).expect("victims are entries");
                evicted.push(self.entries.remove(index));
                self.recount(env);
                if self.within_budget() {
                    let policy = self.config.policy;
                    for gone in &evicted {
                        self.record(gone.id, Action::Evicted { policy }, gone.tokens, 0, env.now_ms);
                    }
                    return Some(evicted.iter().map(|e| e.id).collect());
                }
            }
        }
        let index = self.index_of(id).expect("just inserted");
        self.entries.remove(index);
        for gone in evicted {
            self.insert_sorted(gone);
        }
        self.total_tokens = before;
        None
    }

    /// Keeps the agent's free-text reason on a block's entry (nothing when
    /// the block is not in the window). Notes are never rendered, so the
    /// token budget is unaffected.
    pub fn set_note(&mut self, id: BlockId, note: Option<String>) {
        if let Some(index) = self.index_of(id) {
            self.entries[index].note = note;
        }
    }

    /// Removes a block from the window; when the blocks after it then need a
    /// longer `§` header than fits, others leave by the policy.
    pub fn remove(&mut self, env: &Env, id: BlockId) -> Result<(), WindowError> {
        self.sync(env);
        let index = self.index_of(id).ok_or(WindowError::NotInWindow(id))?;
        let entry = self.entries.remove(index);
        self.record(id, Action::Removed, entry.tokens, 0, env.now_ms);
        self.recount(env);
        // The entries after it may now need a longer `§` header.
        self.enforce(env);
        Ok(())
    }

    /// Empties the window (the focus and task stay).
    pub fn clear(&mut self, env: &Env) -> usize {
        let entries = std::mem::take(&mut self.entries);
        for entry in &entries {
            self.record(entry.id, Action::Cleared, entry.tokens, 0, env.now_ms);
        }
        self.recount(env);
        entries.len()
    }

    /// The current relevance of an entry.
    pub(crate) fn score(&self, env: &Env, entry: &Entry) -> f64 {
        let signals = Signals {
            age_ms: env.now_ms - entry.accessed_ms,
            half_life_ms: self.config.recency_half_life_ms,
            focus_distance: self.focus.and_then(|f| relevance::tree_distance(env.doc, f, entry.id)),
        };
        relevance::score(entry, &signals)
    }

    fn stub_tokens(&self, env: &Env, id: BlockId) -> usize {
        let builder = self.builder(env);
        builder.show(id, Representation::StructureOnly).map_or(0, |s| builder.count(id, &s))
    }

    pub(crate) fn within_budget(&self) -> bool {
        self.total_tokens <= self.config.max_tokens && self.entries.len() <= self.config.max_blocks
    }

    pub(crate) fn index_of(&self, id: BlockId) -> Option<usize> {
        self.entries.iter().position(|e| e.id == id)
    }

    pub(crate) fn insert_sorted(&mut self, entry: Entry) {
        let at = self.entries.partition_point(|e| e.order < entry.order);
        self.entries.insert(at, entry);
    }

    pub(crate) fn builder<'a>(&self, env: &'a Env) -> Builder<'a> {
        Builder {
            doc: env.doc,
            tokenizer: env.tokenizer,
            summarizer: env.summarizer,
            truncate_tokens: self.config.truncate_tokens,
            summary_tokens: self.config.summary_tokens,
            counted: self.config.budget_format,
        }
    }

    pub(crate) fn record(
        &mut self,
        id: BlockId,
        action: Action,
        tokens_before: usize,
        tokens_after: usize,
        at_ms: i64,
    ) {
        *self.removed.entry(action.name().to_owned()).or_default() += 1;
        if self.log.len() == LOG_LEN {
            self.log.pop_front();
        }
        self.log.push_back(Change { id, action, tokens_before, tokens_after, at_ms });
    }
}

impl ContextWindow {
    /// A new entry with its cached facts computed.
    pub(crate) fn new_entry(
        &self,
        builder: &Builder,
        id: BlockId,
        reason: Reason,
        relevance: f64,
        representation: Representation,
        now_ms: i64,
    ) -> Entry {
        let mut entry = Entry {
            id,
            reason,
            note: None,
            relevance,
            representation,
            tokens: 0,
            full_tokens: 0,
            added_ms: now_ms,
            accessed_ms: now_ms,
            access_count: 1,
            order: Vec::new(),
            path: Vec::new(),
            occasion: None,
            task_score: None,
        };
        refresh(&mut entry, builder, self.task.as_ref());
        entry
    }
}

/// Recomputes an entry's cached facts (order, path, task score, tokens).
pub(crate) fn refresh(entry: &mut Entry, builder: &Builder, task: Option<&Task>) {
    let doc = builder.doc;
    entry.order = outline::order_key(doc, entry.id);
    entry.path = outline::titled_path(doc, entry.id);
    entry.occasion = doc.get(entry.id).and_then(outline::occasion);
    entry.task_score = task_score(builder, entry.id, &entry.path, task);
    entry.full_tokens = doc.get(entry.id).map_or(0, |b| outline::block_tokens(b, builder.tokenizer));
    entry.tokens = builder.show(entry.id, entry.representation).map_or(0, |shown| builder.count(entry.id, &shown));
}

fn task_score(builder: &Builder, id: BlockId, path: &[BlockId], task: Option<&Task>) -> Option<f64> {
    let task = task?;
    let block = builder.doc.get(id)?;
    let mut text = outline::full_body(block);
    for ancestor in path.iter().filter_map(|a| builder.doc.get(*a)) {
        text.push(' ');
        text.push_str(&outline::title(ancestor).unwrap_or_default());
    }
    Some(task.similarity(&text))
}
