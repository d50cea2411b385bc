//! The `rmcp` server handler: one per client connection, turning MCP
//! requests into [`Connection`] calls on tokio's blocking pool (engine work
//! never stalls the transport).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents, Role, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use ucpkit_registry::{client_message, tools, CallError, Connection, Library, ToolDef, ToolOffer};

use crate::{guide, resources};

/// The handler of one client connection.
pub struct UcpServer {
    connection: Arc<Connection>,
}

impl UcpServer {
    /// A handler for a new client offered `offer` (results hold at most
    /// its `max_result_tokens`, at least `ucpkit_registry::MIN_RESULT_TOKENS`).
    pub fn new(library: Arc<Library>, offer: Arc<ToolOffer>) -> Self {
        UcpServer { connection: Arc::new(Connection::new(library, offer)) }
    }

    /// A request that cannot be served as asked.
    fn invalid(&self, error: CallError) -> ErrorData {
        ErrorData::invalid_params(client_message(self.connection.library(), &error), None)
    }

    /// Runs `f` with the connection on the blocking pool.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, CallError> + Send + 'static,
    ) -> Result<Result<T, CallError>, ErrorData> {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || f(&connection))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the request's task failed: {e}"), None))
    }
}

/// A tool's definition in MCP's form: the same name, description, input
/// schema and annotations.
pub fn definition(tool: ToolDef) -> Tool {
    let mut annotations = ToolAnnotations::new();
    annotations.read_only_hint = Some(tool.annotations.read_only_hint);
    annotations.open_world_hint = Some(tool.annotations.open_world_hint);
    Tool::new(tool.name, tool.description, tool.input_schema).with_annotations(annotations)
}

const INSTRUCTIONS: &str = "A document graph you move through with UCL (`ucl` tool; the `ucl` prompt teaches it) \
     while curating a context window under a token budget. Start with `context` for a question, or `search` then \
     `ucl`. Documents and blocks are resources: ucp://<document>/<block id>.";

impl ServerHandler for UcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts().build())
            .with_server_info(Implementation::new("ucp", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let result = self.negotiate_initialize(&request)?;
        if self.connection.offer().agents.is_some() {
            let asker = crate::ElicitingAsker::new(context.peer.clone(), tokio::runtime::Handle::current());
            self.connection.set_asker(Arc::new(asker));
        }
        // The client's session opens now; an empty store leaves it to `open`.
        if let Err(e) = self.blocking(|c| c.start()).await? {
            tracing::info!("no session at initialize: {e}");
        }
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            tools::listed(self.connection.offer()).into_iter().map(definition).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        let result = self.blocking(move |c| tools::call(c, &name, &arguments)).await?;
        let result = match result {
            Ok(output) if output.is_error => CallToolResult::error(vec![ContentBlock::text(output.text)]),
            Ok(output) => CallToolResult::success(vec![ContentBlock::text(output.text)]),
            // Not a tool: the request cannot be routed (a JSON-RPC error).
            Err(e @ CallError::UnknownTool(_)) => return Err(self.invalid(e)),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(client_message(self.connection.library(), &e))]),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let (items, next) = self
            .blocking(move |c| resources::list(c.library(), cursor.as_deref()))
            .await?
            .map_err(|e| self.invalid(e))?;
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let read_uri = uri.clone();
        let text = self
            .blocking(move |c| resources::read(c.library(), &read_uri, c.cap()))
            .await?
            .map_err(|e| ErrorData::resource_not_found(client_message(self.connection.library(), &e), None))?;
        let contents = ResourceContents::text(text, uri).with_mime_type("text/markdown");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(guide::NAME, Some(guide::DESCRIPTION), None)]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != guide::NAME {
            return Err(ErrorData::invalid_params(format!("unknown prompt {:?}", request.name), None));
        }
        let message = PromptMessage::new_text(Role::User, guide::TEXT);
        Ok(GetPromptResult::new(vec![message]).with_description(guide::DESCRIPTION).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_the_registrys_as_they_are() {
        // What a tool list costs is measured on the registry's definitions
        // (the README's figures): MCP's form must be the same JSON.
        let root = tempfile::tempdir().unwrap();
        let everything = ToolOffer { root: Some(root.path().to_owned()), ..ToolOffer::documents(8000) };
        let listed = tools::list(&everything);
        assert!(listed.len() > 15);
        for tool in listed {
            let ours = serde_json::to_value(&tool).unwrap();
            assert_eq!(serde_json::to_value(definition(tool)).unwrap(), ours);
        }
    }
}
