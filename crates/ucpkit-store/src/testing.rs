//! Stores for the conformance suite: each test of the store runs on every
//! backend this build has. SQLite in a temporary folder always; PostgreSQL
//! in a throwaway database when `UCP_TEST_POSTGRES` names a server
//! (`scripts/pg-cluster start DIR` starts one and prints the line). Shared
//! by the crate's unit tests and its integration tests (`tests/`), so it
//! uses the public API alone; other crates' tests include it too (so not
//! every one of them uses all of it).
#![allow(dead_code)]

use super::Store;

/// Where one test's store lives; [`Place::open`] opens as many handles
/// (writers, nodes) on it as the test wants.
pub struct Place {
    /// `sqlite` or `postgres`, for messages.
    pub backend: &'static str,
    dir: tempfile::TempDir,
    url: Option<String>,
    #[cfg(feature = "postgres")]
    _database: Option<throwaway::Database>,
}

impl Place {
    /// A new handle on this place's store.
    pub fn open(&self) -> Store {
        match &self.url {
            Some(url) => Store::open_url(url, self.dir.path().join("cache")),
            None => Store::open(self.dir.path().join(".ucp")),
        }
        .unwrap_or_else(|e| panic!("opening the {} store: {e}", self.backend))
    }

    /// The SQLite store's folder; `None` on another backend.
    pub fn sqlite_dir(&self) -> Option<std::path::PathBuf> {
        self.url.is_none().then(|| self.dir.path().join(".ucp"))
    }

    /// The PostgreSQL store's URL; `None` on SQLite.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }
}

/// A place on each backend: SQLite, then PostgreSQL when a test server
/// is given.
pub fn places() -> Vec<Place> {
    let sqlite = Place {
        backend: "sqlite",
        dir: tempfile::tempdir().expect("a temporary folder"),
        url: None,
        #[cfg(feature = "postgres")]
        _database: None,
    };
    std::iter::once(sqlite).chain(postgres()).collect()
}

/// A place in a throwaway database of the server `UCP_TEST_POSTGRES`
/// names, if any.
fn postgres() -> Option<Place> {
    let Some(server) = std::env::var("UCP_TEST_POSTGRES").ok().filter(|s| !s.is_empty()) else {
        eprintln!("note: UCP_TEST_POSTGRES is not set: the PostgreSQL half of this test is skipped");
        return None;
    };
    #[cfg(feature = "postgres")]
    {
        let database = throwaway::Database::create(&server);
        Some(Place {
            backend: "postgres",
            dir: tempfile::tempdir().expect("a temporary folder"),
            url: Some(database.url.clone()),
            _database: Some(database),
        })
    }
    #[cfg(not(feature = "postgres"))]
    {
        eprintln!("note: UCP_TEST_POSTGRES={server} but this build lacks the `postgres` feature: SQLite only");
        None
    }
}

#[cfg(feature = "postgres")]
mod throwaway {
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A database created for one test on the server, dropped after it.
    pub struct Database {
        pub url: String,
        server: String,
        name: String,
    }

    impl Database {
        /// Creates a database of a new name on `server` (a URL naming a
        /// database to connect to for that).
        pub fn create(server: &str) -> Database {
            static COUNTER: AtomicU32 = AtomicU32::new(0);
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
            let name = format!("ucp_test_{}_{}_{nanos}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
            let mut admin = postgres::Client::connect(server, postgres::NoTls)
                .unwrap_or_else(|e| panic!("UCP_TEST_POSTGRES={server} does not answer: {e}"));
            admin.batch_execute(&format!("CREATE DATABASE {name}")).expect("creating a test database");
            Database { url: with_database(server, &name), server: server.to_owned(), name }
        }
    }

    impl Drop for Database {
        fn drop(&mut self) {
            if let Ok(mut admin) = postgres::Client::connect(&self.server, postgres::NoTls) {
                // A test that failed may leave its database; a later run's
                // names are new ones.
                let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
            }
        }
    }

    /// `url` naming database `name` instead of its own.
    fn with_database(url: &str, name: &str) -> String {
        let (base, query) = url.split_once('?').map_or((url, None), |(b, q)| (b, Some(q)));
        let authority = base.find("://").map_or(0, |at| at + 3);
        let path = base[authority..].find('/').map_or(base.len(), |at| authority + at);
        let query = query.map(|q| format!("?{q}")).unwrap_or_default();
        format!("{}/{name}{query}", &base[..path])
    }
}
