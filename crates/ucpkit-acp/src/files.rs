//! The client's file system as the coding tools' buffers: when the client
//! offers both `fs/read_text_file` and `fs/write_text_file`, `read`,
//! `edit` and `write` see the editor's buffers (unsaved changes included)
//! and write through the editor. The jail has resolved every path first.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use ucpkit_registry::parts::files::Buffers;

use crate::updates::Updates;

/// How long the client may take over one file.
const FILE_TIME: Duration = Duration::from_secs(60);

/// A session's client, as buffers.
pub(crate) struct ClientFiles(pub(crate) Updates);

impl ClientFiles {
    /// Sends `request` and waits for its answer, at most [`FILE_TIME`].
    fn ask<R: agent_client_protocol::JsonRpcRequest>(&self, request: R) -> Result<R::Response, String> {
        let sent = self.0.client().send_request(request);
        self.0.runtime().block_on(async move {
            match tokio::time::timeout(FILE_TIME, sent.block_task()).await {
                Ok(answer) => answer.map_err(|e| match e.data {
                    Some(data) => format!("{} ({data})", e.message),
                    None => e.message.clone(),
                }),
                Err(_) => Err(format!("no answer in {} s", FILE_TIME.as_secs())),
            }
        })
    }
}

impl Buffers for ClientFiles {
    fn read(&self, path: &Path) -> Result<Option<String>, String> {
        match self.ask(ReadTextFileRequest::new(self.0.session_id(), path)) {
            Ok(response) => Ok(Some(response.content)),
            // Editors answer a missing file with an error of their own.
            Err(_) if !path.exists() => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        self.ask(WriteTextFileRequest::new(self.0.session_id(), path, text)).map(drop)
    }
}
