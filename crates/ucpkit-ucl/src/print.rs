//! The canonical printer: every syntax node back to UCL text that parses to
//! an equal node. Keywords are upper case, parameters `NAME=value`, strings
//! double-quoted.

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::*;

/// The document form as canonical UCL (section headers only when the
/// document has structure or block definitions).
pub fn print_document(document: &UclDocument) -> String {
    let mut out = String::new();
    let sections = !document.structure.is_empty() || !document.blocks.is_empty();
    if !document.structure.is_empty() {
        out.push_str("STRUCTURE\n");
        for entry in &document.structure {
            let children: Vec<String> = entry.children.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "{}: [{}]", entry.parent, children.join(", "));
        }
    }
    if !document.blocks.is_empty() {
        out.push_str("BLOCKS\n");
        for block in &document.blocks {
            let _ = write!(out, "{} #{}", content_type_name(block.content_type), block.id);
            write_properties(&mut out, &block.properties);
            write_content(&mut out, block.content.as_ref());
            out.push('\n');
        }
    }
    if sections && !document.commands.is_empty() {
        out.push_str("COMMANDS\n");
    }
    for command in &document.commands {
        let _ = writeln!(out, "{command}");
    }
    out
}

/// A command list as canonical UCL, one command per line.
pub fn print_commands(commands: &[Command]) -> String {
    commands.iter().map(|c| format!("{c}\n")).collect()
}

impl Display for BlockRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            BlockRef::Id(id) => write!(f, "{id}"),
            BlockRef::Short(n) => write!(f, "{n}"),
            BlockRef::Name(name) => f.write_str(name),
            BlockRef::Label(label) if is_bare_label(label) => write!(f, "@{label}"),
            BlockRef::Label(label) => write!(f, "@{}", quote(label)),
        }
    }
}

impl Display for Value {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{}", float(*x)),
            Value::String(s) => f.write_str(&quote(s)),
            Value::Ref(BlockRef::Id(id)) => write!(f, "@{id}"),
            Value::Ref(other) => write!(f, "{other}"),
            Value::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Object(entries) => {
                f.write_str("{")?;
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {value}", quote(key))?;
                }
                f.write_str("}")
            }
        }
    }
}

impl Display for Path {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                PathSegment::Field(name) if is_word(name) && (i > 0 || !is_reserved_in_conditions(name)) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                PathSegment::Field(name) => write!(f, "[{}]", quote(name))?,
                PathSegment::Index(index) => write!(f, "[{index}]")?,
                PathSegment::Slice(start, end) => {
                    f.write_str("[")?;
                    if let Some(start) = start {
                        write!(f, "{start}")?;
                    }
                    f.write_str(":")?;
                    if let Some(end) = end {
                        write!(f, "{end}")?;
                    }
                    f.write_str("]")?;
                }
            }
        }
        Ok(())
    }
}

/// Words a condition reads as operators, so a path cannot start with them bare.
fn is_reserved_in_conditions(word: &str) -> bool {
    const RESERVED: &[&str] = &[
        "NOT",
        "AND",
        "OR",
        "WHERE",
        "DRY_RUN",
        "CASCADE",
        "PRESERVE_CHILDREN",
        "EXISTS",
        "IS_NULL",
        "IS_NOT_NULL",
        "IS_EMPTY",
        "CONTAINS",
        "STARTS_WITH",
        "ENDS_WITH",
        "MATCHES",
    ];
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(word))
}

impl Display for Condition {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Condition::Compare { path, op, value } => write!(f, "{path} {} {value}", compare_op(*op)),
            Condition::Check { path, check } => write!(f, "{path} {}", check_name(*check)),
            Condition::Truthy(path) => write!(f, "{path}"),
            Condition::Not(inner) => match **inner {
                Condition::And(..) | Condition::Or(..) => write!(f, "NOT ({inner})"),
                _ => write!(f, "NOT {inner}"),
            },
            // An operand that is itself AND/OR was parenthesized in the source
            // (chains are flat), so it is written in parentheses again; AND
            // binds tighter, so an AND inside an OR needs none.
            Condition::And(terms) => {
                write_operands(f, terms, " AND ", |t| matches!(t, Condition::And(_) | Condition::Or(_)))
            }
            Condition::Or(terms) => write_operands(f, terms, " OR ", |t| matches!(t, Condition::Or(_))),
        }
    }
}

fn write_operands(
    f: &mut Formatter<'_>,
    terms: &[Condition],
    operator: &str,
    parenthesize: impl Fn(&Condition) -> bool,
) -> fmt::Result {
    for (i, term) in terms.iter().enumerate() {
        if i > 0 {
            f.write_str(operator)?;
        }
        if parenthesize(term) {
            write!(f, "({term})")?;
        } else {
            write!(f, "{term}")?;
        }
    }
    Ok(())
}

impl Display for Command {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        write_command(&mut out, self, 0);
        f.write_str(&out)
    }
}

fn write_command(out: &mut String, command: &Command, indent: usize) {
    match command {
        Command::Edit(edit) => {
            let _ = write!(out, "EDIT {} SET {}", edit.target, edit.path);
            let _ = match &edit.op {
                EditOp::Set(v) => write!(out, " = {v}"),
                EditOp::Append(v) => write!(out, " += {v}"),
                EditOp::Remove(v) => write!(out, " -= {v}"),
                EditOp::Increment => write!(out, " ++"),
                EditOp::Decrement => write!(out, " --"),
            };
            write_where(out, edit.condition.as_ref());
        }
        Command::Append(append) => {
            let _ = write!(out, "APPEND {} {}", append.parent, content_type_name(append.content_type));
            if let Some(at) = append.at {
                let _ = write!(out, " AT {at}");
            }
            if !append.properties.is_empty() {
                out.push_str(" WITH");
                write_properties(out, &append.properties);
            }
            write_content(out, append.content.as_ref());
        }
        Command::Move(mv) => {
            let _ = match &mv.destination {
                MoveDestination::To { parent, at: Some(at) } => write!(out, "MOVE {} TO {parent} AT {at}", mv.block),
                MoveDestination::To { parent, at: None } => write!(out, "MOVE {} TO {parent}", mv.block),
                MoveDestination::Before(sibling) => write!(out, "MOVE {} BEFORE {sibling}", mv.block),
                MoveDestination::After(sibling) => write!(out, "MOVE {} AFTER {sibling}", mv.block),
            };
        }
        Command::Delete(delete) => {
            out.push_str("DELETE");
            if let Some(target) = &delete.target {
                let _ = write!(out, " {target}");
            }
            match delete.mode {
                DeleteMode::Orphan => {}
                DeleteMode::Cascade => out.push_str(" CASCADE"),
                DeleteMode::PreserveChildren => out.push_str(" PRESERVE_CHILDREN"),
            }
            write_where(out, delete.condition.as_ref());
        }
        Command::Link(link) => {
            let _ = write!(out, "LINK {} {} {}", link.source, edge_type(&link.edge_type), link.target);
            if !link.properties.is_empty() {
                out.push_str(" WITH");
                write_properties(out, &link.properties);
            }
        }
        Command::Unlink(unlink) => {
            let _ = write!(out, "UNLINK {} {} {}", unlink.source, edge_type(&unlink.edge_type), unlink.target);
        }
        Command::Prune(prune) => {
            let _ = match &prune.target {
                PruneTarget::Unreachable => write!(out, "PRUNE UNREACHABLE"),
                PruneTarget::Where(condition) => write!(out, "PRUNE WHERE {condition}"),
            };
            if prune.dry_run {
                out.push_str(" DRY_RUN");
            }
        }
        Command::Fold(fold) => {
            let _ = write!(out, "FOLD {}", fold.target);
            if let Some(depth) = fold.depth {
                let _ = write!(out, " DEPTH {depth}");
            }
            if let Some(tokens) = fold.max_tokens {
                let _ = write!(out, " MAX_TOKENS {tokens}");
            }
            if !fold.preserve_tags.is_empty() {
                let tags: Vec<String> = fold.preserve_tags.iter().map(|t| quote(t)).collect();
                let _ = write!(out, " PRESERVE_TAGS [{}]", tags.join(", "));
            }
        }
        Command::Snapshot(snapshot) => {
            let _ = match snapshot {
                Snapshot::Create { name, properties } => {
                    let _ = write!(out, "SNAPSHOT CREATE {}", quote(name));
                    if !properties.is_empty() {
                        out.push_str(" WITH");
                        write_properties(out, properties);
                    }
                    Ok(())
                }
                Snapshot::Restore(name) => write!(out, "SNAPSHOT RESTORE {}", quote(name)),
                Snapshot::Delete(name) => write!(out, "SNAPSHOT DELETE {}", quote(name)),
                Snapshot::List => write!(out, "SNAPSHOT LIST"),
                Snapshot::Diff(a, b) => write!(out, "SNAPSHOT DIFF {} {}", quote(a), quote(b)),
            };
        }
        Command::Transaction(transaction) => {
            let (keyword, name) = match transaction {
                Transaction::Begin { name } => ("BEGIN TRANSACTION", name),
                Transaction::Commit { name } => ("COMMIT", name),
                Transaction::Rollback { name } => ("ROLLBACK", name),
            };
            out.push_str(keyword);
            if let Some(name) = name {
                let _ = write!(out, " {}", quote(name));
            }
        }
        Command::Atomic(atomic) => {
            out.push_str("ATOMIC {\n");
            for inner in &atomic.commands {
                out.push_str(&"  ".repeat(indent + 1));
                write_command(out, inner, indent + 1);
                out.push('\n');
            }
            out.push_str(&"  ".repeat(indent));
            out.push('}');
        }
        Command::Goto(goto) => {
            let _ = write!(out, "GOTO {}", goto.target);
        }
        Command::Back(back) => {
            out.push_str("BACK");
            if let Some(steps) = back.steps {
                let _ = write!(out, " {steps}");
            }
        }
        Command::Expand(expand) => {
            let _ = write!(out, "EXPAND {} {}", expand.target, direction(expand.direction));
            write_param(out, "DEPTH", expand.depth);
            write_param(out, "MODE", expand.mode.map(view_mode));
            write_list(out, "ROLES", &expand.roles);
            write_list(out, "TAGS", &expand.tags);
            write_param(out, "TOKENS", expand.tokens);
        }
        Command::Follow(follow) => {
            let types: Vec<String> = follow.edge_types.iter().map(edge_type).collect();
            let _ = write!(out, "FOLLOW {} {}", follow.source, types.join(","));
            if let Some(target) = &follow.target {
                let _ = write!(out, " {target}");
            }
        }
        Command::Path(path) => {
            let _ = write!(out, "PATH {} TO {}", path.from, path.to);
            write_param(out, "MAX", path.max);
        }
        Command::Search(search) => {
            let _ = write!(out, "SEARCH {}", quote(&search.query));
            write_param(out, "LIMIT", search.limit);
            write_param(out, "MIN_SIMILARITY", search.min_similarity.map(float));
            write_list(out, "ROLES", &search.roles);
            write_list(out, "TAGS", &search.tags);
        }
        Command::Find(find) => {
            out.push_str("FIND");
            write_param(out, "ROLE", find.role.as_deref().map(word_or_quoted));
            write_param(out, "TAG", find.tag.as_deref().map(word_or_quoted));
            write_param(out, "LABEL", find.label.as_deref().map(word_or_quoted));
            write_param(out, "PATTERN", find.pattern.as_deref().map(quote));
        }
        Command::View(view) => {
            match &view.target {
                ViewTarget::Block(target) => {
                    let _ = write!(out, "VIEW {target}");
                }
                ViewTarget::Neighborhood { depth } => {
                    out.push_str("VIEW NEIGHBORHOOD");
                    write_param(out, "DEPTH", *depth);
                }
                ViewTarget::Map { tokens } => {
                    out.push_str("VIEW MAP");
                    write_param(out, "TOKENS", *tokens);
                }
            }
            write_param(out, "MODE", view.mode.map(view_mode));
        }
        Command::Ctx(ctx) => write_ctx(out, ctx),
    }
}

fn write_ctx(out: &mut String, ctx: &Ctx) {
    // The keywords are the command's name; what follows them is printed here.
    out.push_str(ctx.name());
    let _ = match ctx {
        Ctx::Add { target, reason, relevance, note } => {
            let _ = write!(out, " {target}");
            match note {
                Some(note) => write_param(out, "REASON", Some(quote(note))),
                None => write_param(out, "REASON", reason.map(Reason::as_str)),
            }
            write_param(out, "RELEVANCE", relevance.map(float));
            Ok(())
        }
        Ctx::AddResults | Ctx::Clear | Ctx::Stats => Ok(()),
        Ctx::AddChildren { parent } => write!(out, " {parent}"),
        Ctx::AddPath { from, to } => write!(out, " {from} TO {to}"),
        Ctx::Remove { target } => write!(out, " {target}"),
        Ctx::Expand { direction, depth, tokens } => {
            let name = match direction {
                CtxDirection::Up => "UP",
                CtxDirection::Down => "DOWN",
                CtxDirection::Both => "BOTH",
                CtxDirection::Semantic => "SEMANTIC",
                CtxDirection::Auto => "AUTO",
            };
            let _ = write!(out, " {name}");
            write_param(out, "DEPTH", *depth);
            write_param(out, "TOKENS", *tokens);
            Ok(())
        }
        Ctx::Compress { method } => {
            let name = match method {
                CompressMethod::Truncate => "TRUNCATE",
                CompressMethod::Summarize => "SUMMARIZE",
                CompressMethod::StructureOnly => "STRUCTURE_ONLY",
            };
            write!(out, " METHOD={name}")
        }
        Ctx::Prune { min_relevance, max_age } => {
            write_param(out, "MIN_RELEVANCE", min_relevance.map(float));
            write_param(out, "MAX_AGE", *max_age);
            Ok(())
        }
        Ctx::Render { format } => {
            let name = format.map(|f| match f {
                RenderFormat::Default => "DEFAULT",
                RenderFormat::ShortIds => "SHORT_IDS",
                RenderFormat::Markdown => "MARKDOWN",
            });
            write_param(out, "FORMAT", name);
            Ok(())
        }
        Ctx::Focus { target: Some(target) } => write!(out, " {target}"),
        Ctx::Focus { target: None } => write!(out, " CLEAR"),
    };
}

fn write_param(out: &mut String, name: &str, value: Option<impl Display>) {
    if let Some(value) = value {
        let _ = write!(out, " {name}={value}");
    }
}

fn write_list(out: &mut String, name: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    if items.iter().all(|i| is_word(i)) {
        let _ = write!(out, " {name}={}", items.join(","));
    } else {
        let quoted: Vec<String> = items.iter().map(|i| quote(i)).collect();
        let _ = write!(out, " {name}=[{}]", quoted.join(", "));
    }
}

fn write_where(out: &mut String, condition: Option<&Condition>) {
    if let Some(condition) = condition {
        let _ = write!(out, " WHERE {condition}");
    }
}

fn write_properties(out: &mut String, properties: &Properties) {
    for (key, value) in properties {
        let _ = write!(out, " {}={value}", word_or_quoted(key));
    }
}

fn write_content(out: &mut String, content: Option<&ContentLiteral>) {
    match content {
        None => {}
        Some(ContentLiteral::Value(value)) => {
            let _ = write!(out, " :: {value}");
        }
        Some(ContentLiteral::Table(rows)) => {
            out.push_str(" ::");
            for (i, row) in rows.iter().enumerate() {
                out.push_str(if i == 0 { " |" } else { "\n|" });
                for cell in row {
                    out.push_str(&escape_cell(cell));
                    out.push('|');
                }
            }
        }
    }
}

/// The name of a content type as written in UCL.
pub fn content_type_name(content_type: ContentType) -> &'static str {
    match content_type {
        ContentType::Text => "text",
        ContentType::Code => "code",
        ContentType::Table => "table",
        ContentType::Math => "math",
        ContentType::Media => "media",
        ContentType::Json => "json",
        ContentType::Binary => "binary",
        ContentType::Composite => "composite",
    }
}

fn edge_type(edge_type: &ucpkit_core::EdgeType) -> String {
    let name = edge_type.name();
    match edge_type {
        ucpkit_core::EdgeType::Custom(custom) if !is_word(custom) => quote(&name),
        _ => name.into_owned(),
    }
}

fn direction(direction: Direction) -> &'static str {
    match direction {
        Direction::Up => "UP",
        Direction::Down => "DOWN",
        Direction::Both => "BOTH",
        Direction::Semantic => "SEMANTIC",
    }
}

fn view_mode(mode: ViewMode) -> &'static str {
    match mode {
        ViewMode::Full => "FULL",
        ViewMode::Preview => "PREVIEW",
        ViewMode::Metadata => "METADATA",
        ViewMode::Ids => "IDS",
        ViewMode::Adaptive => "ADAPTIVE",
    }
}

fn compare_op(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Eq => "=",
        CompareOp::Ne => "!=",
        CompareOp::Gt => ">",
        CompareOp::Ge => ">=",
        CompareOp::Lt => "<",
        CompareOp::Le => "<=",
        CompareOp::Contains => "CONTAINS",
        CompareOp::StartsWith => "STARTS_WITH",
        CompareOp::EndsWith => "ENDS_WITH",
        CompareOp::Matches => "MATCHES",
    }
}

fn check_name(check: Check) -> &'static str {
    match check {
        Check::Exists => "EXISTS",
        Check::IsNull => "IS_NULL",
        Check::IsNotNull => "IS_NOT_NULL",
        Check::IsEmpty => "IS_EMPTY",
    }
}

/// A float that reads back as the same value (`{:?}` is shortest
/// round-trip and always has a fraction or exponent).
fn float(x: f64) -> String {
    format!("{x:?}")
}

/// Whether `text` lexes as one word token that is not a reserved value.
pub(crate) fn is_word(text: &str) -> bool {
    let mut parts = text.split('-');
    let first = parts.next().unwrap_or("");
    let starts_well = first.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let word_chars = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    starts_well
        && word_chars(first)
        && parts.all(|p| !p.is_empty() && word_chars(p))
        && !["true", "false", "null"].iter().any(|r| r.eq_ignore_ascii_case(text))
}

fn is_bare_label(label: &str) -> bool {
    let mut chars = label.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
        && label.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && label.parse::<ucpkit_core::BlockId>().is_err()
}

fn word_or_quoted(text: &str) -> String {
    if is_word(text) {
        text.to_owned()
    } else {
        quote(text)
    }
}

/// A double-quoted string literal; newlines and tabs stay literal.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A table cell: bars, backslashes and line breaks escaped; spaces at the
/// ends kept as `\u{20}` so trimming does not eat them.
fn escape_cell(cell: &str) -> String {
    let mut out = String::with_capacity(cell.len());
    let last = cell.chars().count().saturating_sub(1);
    for (i, c) in cell.chars().enumerate() {
        match c {
            '|' => out.push_str("\\|"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' ' if i == 0 || i == last => out.push_str("\\u{20}"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}
