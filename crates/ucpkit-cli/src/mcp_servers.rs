//! `ucp mcp-servers`: the other MCP servers of the configuration
//! (`[mcp_servers.NAME]`), for people and scripts: list them, list their
//! tools, call one. And the external tools `ucp agent` and
//! `ucp mcp --gateway` offer next to UCP's own.

use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde_json::{json, Value};
use ucpkit_mcp_client::{names, registry_tools, McpServers, ServersConfig, Transport};
use ucpkit_registry::parts::llm::Config;
use ucpkit_registry::Tool;

use crate::{print, print_json, Cli};

/// `ucp mcp-servers`.
#[derive(Args)]
pub(crate) struct McpServersArgs {
    #[command(subcommand)]
    command: McpServersCommand,
}

#[derive(Subcommand)]
enum McpServersCommand {
    /// The configured servers and what their cached lists hold (no server
    /// is started unless --refresh).
    List {
        /// Connect every enabled server and list it again.
        #[arg(long)]
        refresh: bool,
    },
    /// The tools of one server (of all when no name), as UCP's registry
    /// names them; a server never listed is connected once to list it.
    Tools {
        /// The server.
        name: Option<String>,
        /// List again from the server, not from the cache.
        #[arg(long)]
        refresh: bool,
    },
    /// Call one tool of a server and print its answer.
    Call {
        /// The server.
        name: String,
        /// The tool, by the server's name for it.
        tool: String,
        /// Its arguments, a JSON object.
        #[arg(long, default_value = "{}", value_name = "JSON")]
        args: String,
    },
}

/// The configured servers: the user's and the store's configuration
/// files, then the --mcp-config files (a later one's server replaces one
/// of the same name).
pub(crate) fn servers_config(cli: &Cli) -> anyhow::Result<ServersConfig> {
    let mut files = Config::files(Some(&cli.store_dir()));
    files.extend(cli.mcp_config.iter().cloned());
    Ok(ServersConfig::load(&files)?)
}

/// The configured servers, their lists cached in the store when there is
/// one. Nothing is started.
pub(crate) fn servers(cli: &Cli) -> anyhow::Result<Arc<McpServers>> {
    let store = cli.store_dir();
    let cache = store.is_dir().then_some(store.as_path());
    Ok(Arc::new(McpServers::new(&servers_config(cli)?, cache)?))
}

/// The registry records of the servers' tools; what is not offered (a
/// server that could not be listed, a name too long) is said on stderr.
pub(crate) fn external_tools(servers: &Arc<McpServers>) -> Vec<Tool> {
    let (tools, notes) = registry_tools(servers);
    for note in notes {
        eprintln!("ucp: {note}");
    }
    tools
}

pub(crate) fn run(cli: &Cli, args: &McpServersArgs) -> anyhow::Result<()> {
    match &args.command {
        McpServersCommand::List { refresh } => list(cli, *refresh),
        McpServersCommand::Tools { name, refresh } => tools(cli, name.as_deref(), *refresh),
        McpServersCommand::Call { name, tool, args } => call(cli, name, tool, args),
    }
}

fn list(cli: &Cli, refresh: bool) -> anyhow::Result<()> {
    let config = servers_config(cli)?;
    let servers = servers(cli)?;
    let listings = if refresh { servers.listings(true) } else { Vec::new() };
    let mut rows = Vec::new();
    for (name, server) in &config.servers {
        let reached = match server.transport(name)? {
            Transport::Stdio => json!({"transport": "stdio", "command": server.command, "args": server.args}),
            Transport::Http => json!({"transport": "http", "url": server.url}),
        };
        let listed = match listings.iter().find(|(n, _)| n == name) {
            Some((_, Err(e))) => json!({"error": e.to_string()}),
            Some((_, Ok(listing))) => counts(listing),
            None => servers.cached(name).map(|l| counts(&l)).unwrap_or(Value::Null),
        };
        rows.push(json!({"name": name, "enabled": server.enabled, "reached": reached, "listed": listed}));
    }
    if cli.json {
        return print_json(&rows);
    }
    if rows.is_empty() {
        return print(
            "no MCP servers are configured: add [mcp_servers.NAME] to .ucp/config.toml or ~/.config/ucp/config.toml\n",
        );
    }
    let mut text = String::new();
    for row in &rows {
        let reached = &row["reached"];
        let how = match reached["transport"].as_str() {
            Some("http") => reached["url"].as_str().unwrap_or_default().to_owned(),
            _ => {
                let args: Vec<&str> =
                    reached["args"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                format!("{} {}", reached["command"].as_str().unwrap_or_default(), args.join(" ")).trim_end().to_owned()
            }
        };
        let state = match (&row["enabled"], &row["listed"]) {
            (Value::Bool(false), _) => "disabled".to_owned(),
            (_, Value::Null) => "not listed yet".to_owned(),
            (_, listed) if listed.get("error").is_some() => {
                format!("failed: {}", listed["error"].as_str().unwrap_or_default())
            }
            (_, listed) => format!(
                "{} tools, {} resources, {} prompts ({} {})",
                listed["tools"],
                listed["resources"],
                listed["prompts"],
                listed["server"].as_str().unwrap_or_default(),
                listed["version"].as_str().unwrap_or_default()
            ),
        };
        text.push_str(&format!(
            "{}  [{}] {how}\n    {state}\n",
            row["name"].as_str().unwrap_or_default(),
            reached["transport"].as_str().unwrap_or_default()
        ));
    }
    print(&text)
}

fn counts(listing: &ucpkit_mcp_client::Listing) -> Value {
    json!({
        "tools": listing.tools.len(),
        "resources": listing.resources.len(),
        "prompts": listing.prompts.len(),
        "server": listing.server_name,
        "version": listing.server_version,
    })
}

fn tools(cli: &Cli, name: Option<&str>, refresh: bool) -> anyhow::Result<()> {
    let servers = servers(cli)?;
    let names: Vec<String> = match name {
        Some(name) => vec![name.to_owned()],
        None => servers.names().map(str::to_owned).collect(),
    };
    let mut rows = Vec::new();
    for server in &names {
        let listing = servers.listing(server, refresh)?;
        let config = servers.config(server).context("a listed server is configured")?;
        for tool in &listing.tools {
            let registered = names::tool_name(server, &tool.name);
            rows.push(json!({
                "server": server,
                "tool": tool.name,
                "name": registered.as_ref().ok(),
                "offered": registered.is_ok() && config.offers_tool(&tool.name),
                "description": tool.description,
                "inputSchema": tool.input_schema,
            }));
        }
    }
    if cli.json {
        return print_json(&rows);
    }
    let mut text = String::new();
    for row in &rows {
        let name = row["name"].as_str().unwrap_or("(name too long)");
        let off = if row["offered"] == true { "" } else { " [not offered]" };
        let description = row["description"].as_str().unwrap_or_default().lines().next().unwrap_or_default();
        text.push_str(&format!("{name}{off}\n    {description}\n"));
    }
    print(&text)
}

fn call(cli: &Cli, name: &str, tool: &str, args: &str) -> anyhow::Result<()> {
    let arguments = match serde_json::from_str::<Value>(args).context("--args is not JSON")? {
        Value::Object(arguments) => arguments,
        _ => anyhow::bail!("--args must be a JSON object"),
    };
    let servers = servers(cli)?;
    let result = servers.call_tool(name, tool, arguments)?;
    let output = ucpkit_mcp_client::tools::call_output(&result);
    if cli.json {
        print_json(&result)?;
    } else if !output.is_error {
        print(&format!("{}\n", output.text))?;
    }
    if output.is_error {
        anyhow::bail!("the tool {tool} of {name} answered with an error: {}", output.text);
    }
    Ok(())
}
