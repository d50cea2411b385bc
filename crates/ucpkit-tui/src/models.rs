//! The models the palette offers: for the agent and each sub-agent type,
//! every model the configuration names, the one in use checked; a choice
//! is written to the store's `config.toml` and counts from the next turn
//! (or sub-agent) on.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ucpkit_registry::parts::llm::{Config, Overrides, SUBAGENT_TYPES};

/// Whose model a choice sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// The main agent (`[agent]`).
    Agent,
    /// One sub-agent type (`[subagents.<type>]`).
    Subagent(&'static str),
}

impl Target {
    /// How the palette names it.
    pub(crate) fn label(&self) -> String {
        match self {
            Target::Agent => "Agent".to_owned(),
            Target::Subagent(kind) => format!("Subagent {kind}"),
        }
    }
}

/// One model a target may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelOption {
    /// Whose.
    pub(crate) target: Target,
    /// The provider's name.
    pub(crate) provider: String,
    /// The model's name.
    pub(crate) model: String,
    /// It is the one in use.
    pub(crate) current: bool,
}

/// The configuration as the store's folder reads it, and the model flags
/// the program was given (which win over it).
pub(crate) struct Models {
    store: PathBuf,
    files: Vec<PathBuf>,
    overrides: Overrides,
    config: Config,
}

impl Models {
    /// The configuration files of the store at `store` (the user's, then
    /// the store's) under `overrides`; a file that cannot be read gives an
    /// empty configuration, and why.
    pub(crate) fn load(store: &Path, overrides: Overrides) -> (Models, Option<String>) {
        Models::from_files(store, Config::files(Some(store)), overrides)
    }

    /// The configuration of `files`, choices written to `store`'s file
    /// (which should be the last of them, to win).
    pub(crate) fn from_files(store: &Path, files: Vec<PathBuf>, overrides: Overrides) -> (Models, Option<String>) {
        let (config, problem) = match Config::load_files(&files) {
            Ok(config) => (config, None),
            Err(e) => (Config::default(), Some(e.to_string())),
        };
        (Models { store: store.to_owned(), files, overrides, config }, problem)
    }

    /// The model `target` uses: (provider, model), if one is chosen.
    fn current(&self, target: &Target) -> Option<(String, String)> {
        let settings = match target {
            Target::Agent => self.config.settings(None),
            Target::Subagent(kind) => self.config.settings(Some(kind)),
        };
        let choice = self.config.choose(&settings, &self.overrides).ok()?;
        Some((choice.provider_name, choice.model))
    }

    /// Every (provider, model) the configuration names: each provider's
    /// default model and every model a section names with its provider.
    fn known(&self) -> BTreeSet<(String, String)> {
        let mut known: BTreeSet<(String, String)> = self
            .config
            .providers
            .iter()
            .filter_map(|(name, provider)| Some((name.clone(), provider.model.clone()?)))
            .collect();
        known.extend(targets().filter_map(|target| self.current(&target)));
        known
    }

    /// What each target may use, the current one checked.
    pub(crate) fn options(&self) -> Vec<ModelOption> {
        let known = self.known();
        let mut options = Vec::new();
        for target in targets() {
            let current = self.current(&target);
            for (provider, model) in &known {
                let is_current = current.as_ref().is_some_and(|(p, m)| p == provider && m == model);
                options.push(ModelOption {
                    target: target.clone(),
                    provider: provider.clone(),
                    model: model.clone(),
                    current: is_current,
                });
            }
        }
        options
    }

    /// Makes `option` its target's model in the store's `config.toml`
    /// (its other settings and comments kept; written whole, by rename),
    /// then reads the configuration again. `Some(model)` when the flags
    /// still choose another model.
    pub(crate) fn choose(&mut self, option: &ModelOption) -> Result<Option<String>, String> {
        let path = self.store.join("config.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let mut file: toml_edit::DocumentMut = text.parse().map_err(|e| format!("{}: {e}", path.display()))?;
        let section = match &option.target {
            Target::Agent => table(file.as_table_mut(), "agent")?,
            Target::Subagent(kind) => table(table(file.as_table_mut(), "subagents")?, kind)?,
        };
        section.insert("provider", toml_edit::value(option.provider.as_str()));
        section.insert("model", toml_edit::value(option.model.as_str()));
        let written = file.to_string();
        // Checked before it is written: a file the agent could not read
        // is never left behind.
        let mut check = Config::default();
        check.merge_toml(&written).map_err(|e| format!("the new configuration would not load: {e}"))?;
        write_whole(&path, &written).map_err(|e| format!("{}: {e}", path.display()))?;
        let (models, problem) =
            Models::from_files(&self.store, std::mem::take(&mut self.files), std::mem::take(&mut self.overrides));
        *self = models;
        if let Some(problem) = problem {
            return Err(problem);
        }
        let wanted = (option.provider.clone(), option.model.clone());
        Ok(self.current(&option.target).filter(|now| *now != wanted).map(|(p, m)| format!("{p}/{m}")))
    }
}

/// The agent, then each sub-agent type.
fn targets() -> impl Iterator<Item = Target> {
    std::iter::once(Target::Agent).chain(SUBAGENT_TYPES.iter().map(|kind| Target::Subagent(kind)))
}

/// Table `name` of `parent` (a `[section]` or an inline `{ ... }`), made
/// when absent; an error when `name` holds something else.
fn table<'a>(parent: &'a mut dyn toml_edit::TableLike, name: &str) -> Result<&'a mut dyn toml_edit::TableLike, String> {
    parent
        .entry(name)
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_like_mut()
        .ok_or_else(|| format!("`{name}` in config.toml is not a table"))
}

/// Writes `text` to a file beside `path` (beside the file a link at
/// `path` leads to), with the old file's permissions, then renames it over
/// that file: a reader sees the old file or the new one, never half of one.
fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let temp = dir.join(format!(".config.toml.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        if let Ok(old) = std::fs::metadata(&path) {
            file.set_permissions(old.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&temp, &path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"# the team's models
[agent]
provider = "local"
max_context_tokens = 8000

[providers.local]
api = "openai"
base_url = "http://127.0.0.1:1/v1"
model = "big"

[subagents.explore]
model = "small"
"#;

    fn models() -> (tempfile::TempDir, Models) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), CONFIG).unwrap();
        // The user's own file stays out of the test.
        let (models, problem) =
            Models::from_files(dir.path(), vec![dir.path().join("config.toml")], Overrides::default());
        assert_eq!(problem, None);
        (dir, models)
    }

    fn current(models: &Models, target: &Target) -> String {
        let options = models.options();
        let chosen: Vec<_> = options.iter().filter(|o| &o.target == target && o.current).collect();
        assert_eq!(chosen.len(), 1, "one current model per target");
        format!("{}/{}", chosen[0].provider, chosen[0].model)
    }

    #[test]
    fn every_target_is_offered_every_named_model_with_its_own_checked() {
        let (_dir, models) = models();
        let options = models.options();
        assert_eq!(options.len(), 5 * 2, "five targets, two models");
        assert_eq!(current(&models, &Target::Agent), "local/big");
        assert_eq!(current(&models, &Target::Subagent("explore")), "local/small");
        assert_eq!(current(&models, &Target::Subagent("plan")), "local/big", "no section: the agent's");
    }

    #[test]
    fn a_choice_is_written_to_the_store_s_file_keeping_the_rest() {
        let (dir, mut models) = models();
        let small_for_review = models
            .options()
            .into_iter()
            .find(|o| o.target == Target::Subagent("review") && o.model == "small")
            .unwrap();
        assert_eq!(models.choose(&small_for_review).unwrap(), None, "no flag chooses another");
        assert_eq!(current(&models, &Target::Subagent("review")), "local/small");
        assert_eq!(current(&models, &Target::Agent), "local/big", "the others unchanged");
        let text = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
        assert!(text.starts_with("# the team's models"), "comments kept: {text}");
        assert!(text.contains("[subagents.review]"), "{text}");
        assert!(text.contains("max_context_tokens = 8000"), "{text}");
    }

    #[test]
    fn an_inline_section_is_written_in_place_and_a_flag_still_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let inline = CONFIG.replace("[subagents.explore]\nmodel = \"small\"\n", "");
        std::fs::write(&path, format!("subagents = {{ explore = {{ model = \"small\" }} }}\n{inline}")).unwrap();
        let flags = Overrides { model: Some("pinned".into()), ..Overrides::default() };
        let (mut models, problem) = Models::from_files(dir.path(), vec![path.clone()], flags);
        assert_eq!(problem, None);
        let big_for_explore = ModelOption {
            target: Target::Subagent("explore"),
            provider: "local".into(),
            model: "big".into(),
            current: false,
        };
        assert_eq!(models.choose(&big_for_explore).unwrap().as_deref(), Some("local/pinned"), "--llm wins");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("subagents = { explore = { model = \"big\", provider = \"local\" } }"), "{text}");
    }

    #[test]
    fn a_file_that_is_not_a_table_where_one_is_due_is_refused_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "agent = 3\n").unwrap();
        let (mut models, problem) = Models::from_files(dir.path(), vec![path.clone()], Overrides::default());
        assert!(problem.is_some(), "the file does not load");
        let option = ModelOption { target: Target::Agent, provider: "local".into(), model: "m".into(), current: false };
        assert!(models.choose(&option).unwrap_err().contains("not a table"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "agent = 3\n");
    }
}
