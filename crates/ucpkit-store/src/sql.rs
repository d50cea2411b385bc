//! The one seam between the store's SQL and the engine that runs it:
//! SQLite (embedded, the default) or PostgreSQL (the `postgres` feature,
//! [`crate::postgres`]). Every statement of the store is written once, in
//! SQL both engines accept, with numbered parameters (`?1`); a [`Tx`] runs
//! it inside a transaction that [`Database::read`] or [`Database::write`]
//! opened, and hands rows over as [`Cells`].

use rusqlite::types::{ToSqlOutput, ValueRef};

use crate::StoreError;

/// A parameter of a statement.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    /// An integer.
    Int(i64),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Bytes(&'a [u8]),
    /// No value.
    Null,
}

impl From<i64> for Arg<'_> {
    fn from(value: i64) -> Self {
        Arg::Int(value)
    }
}

impl From<u32> for Arg<'_> {
    fn from(value: u32) -> Self {
        Arg::Int(i64::from(value))
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(value: &'a str) -> Self {
        Arg::Text(value)
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(value: &'a String) -> Self {
        Arg::Text(value)
    }
}

impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(value: &'a [u8]) -> Self {
        Arg::Bytes(value)
    }
}

impl<'a> From<&'a Vec<u8>> for Arg<'a> {
    fn from(value: &'a Vec<u8>) -> Self {
        Arg::Bytes(value)
    }
}

impl<'a, T: Into<Arg<'a>>> From<Option<T>> for Arg<'a> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Arg::Null, Into::into)
    }
}

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            Arg::Int(value) => ValueRef::Integer(value),
            Arg::Text(text) => ValueRef::Text(text.as_bytes()),
            Arg::Bytes(bytes) => ValueRef::Blob(bytes),
            Arg::Null => ValueRef::Null,
        }))
    }
}

/// The parameters of a statement: `args![doc, name]`.
macro_rules! args {
    ($($arg:expr),* $(,)?) => { &[$($crate::sql::Arg::from($arg)),*][..] };
}
pub(crate) use args;

/// What the database engine refused or returned that the store cannot use.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// SQLite's error.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL's (or its connection's) error.
    #[cfg(feature = "postgres")]
    #[error("{}", crate::postgres::describe(.0))]
    Postgres(#[from] ::postgres::Error),
    /// A column that holds another type than the store wrote there.
    #[error("column {column} does not hold {expected}")]
    Type {
        /// The column's position in the row.
        column: usize,
        /// What it should hold.
        expected: &'static str,
    },
}

/// An open connection to the store's database.
pub(crate) enum Database {
    /// The embedded SQLite database.
    Sqlite(rusqlite::Connection),
    /// A PostgreSQL database.
    #[cfg(feature = "postgres")]
    Postgres(Box<crate::postgres::Client>),
}

impl Database {
    /// Runs `read` in a read transaction: every statement sees the
    /// database as it was when the first one ran.
    pub(crate) fn read<T>(&self, read: impl FnOnce(&Tx<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        match self {
            Database::Sqlite(conn) => {
                // Nothing else runs on this connection meanwhile (`&self` is
                // not shared between threads), so the read stands alone.
                let tx = conn.unchecked_transaction().map_err(crate::db("starting a read"))?;
                let out = read(&Tx::Sqlite(&tx))?;
                tx.commit().map_err(crate::db("ending a read"))?;
                Ok(out)
            }
            #[cfg(feature = "postgres")]
            Database::Postgres(client) => client.read(read),
        }
    }

    /// Runs `write` in a write transaction, committed when it returns `Ok`
    /// and rolled back otherwise. Writers take turns: one holds the write
    /// lock from its first statement to its commit, so what it checks
    /// stays true until it has written.
    pub(crate) fn write<T>(&mut self, write: impl FnOnce(&Tx<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        match self {
            Database::Sqlite(conn) => {
                // IMMEDIATE: the write lock is taken before any check.
                let tx = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .map_err(crate::db("starting a transaction"))?;
                let out = write(&Tx::Sqlite(&tx))?;
                tx.commit().map_err(crate::db("committing"))?;
                Ok(out)
            }
            #[cfg(feature = "postgres")]
            Database::Postgres(client) => client.write(write),
        }
    }
}

/// A transaction statements run in.
pub(crate) enum Tx<'a> {
    /// On SQLite.
    Sqlite(&'a rusqlite::Connection),
    /// On PostgreSQL.
    #[cfg(feature = "postgres")]
    Postgres(crate::postgres::Transaction<'a>),
}

impl Tx<'_> {
    /// Runs statement `sql` with `args`; how many rows it changed.
    pub(crate) fn run(&self, context: &'static str, sql: &str, args: &[Arg<'_>]) -> Result<u64, StoreError> {
        match self {
            Tx::Sqlite(conn) => {
                let mut statement = conn.prepare_cached(sql).map_err(crate::db(context))?;
                let changed = statement.execute(rusqlite::params_from_iter(args)).map_err(crate::db(context))?;
                Ok(changed as u64)
            }
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.run(sql, args).map_err(crate::db(context)),
        }
    }

    /// Tells the store's other nodes, when this transaction commits, that
    /// document `name` changed (PostgreSQL's NOTIFY; nothing on SQLite,
    /// whose readers are on this machine and look before each call).
    #[cfg_attr(not(feature = "postgres"), allow(unused_variables))]
    pub(crate) fn notify(&self, name: &str) -> Result<(), StoreError> {
        match self {
            Tx::Sqlite(_) => Ok(()),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.notify(name),
        }
    }

    /// Brings the planner's statistics of the block and edge tables up to
    /// date after this bulk write commits (PostgreSQL's ANALYZE, best
    /// effort: without it, the first reads of a freshly indexed document
    /// may scan whole tables; nothing on SQLite).
    pub(crate) fn analyze(&self) -> Result<(), StoreError> {
        match self {
            Tx::Sqlite(_) => Ok(()),
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.analyze(),
        }
    }

    /// Runs query `sql` with `args`, handing each row to `row` in turn.
    /// `row` runs no statement itself (on PostgreSQL the transaction is
    /// busy streaming the rows).
    pub(crate) fn each(
        &self,
        context: &'static str,
        sql: &str,
        args: &[Arg<'_>],
        mut row: impl FnMut(&Cells<'_>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        match self {
            Tx::Sqlite(conn) => {
                let mut statement = conn.prepare_cached(sql).map_err(crate::db(context))?;
                let mut rows = statement.query(rusqlite::params_from_iter(args)).map_err(crate::db(context))?;
                while let Some(next) = rows.next().map_err(crate::db(context))? {
                    row(&Cells::Sqlite(next))?;
                }
                Ok(())
            }
            #[cfg(feature = "postgres")]
            Tx::Postgres(tx) => tx.each(context, sql, args, &mut |next| row(&Cells::Postgres(next))),
        }
    }

    /// Every row of query `sql`, each made a `T` by `row`.
    pub(crate) fn all<T>(
        &self,
        context: &'static str,
        sql: &str,
        args: &[Arg<'_>],
        mut row: impl FnMut(&Cells<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        let mut out = Vec::new();
        self.each(context, sql, args, |cells| {
            out.push(row(cells)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row of query `sql`, made a `T` by `row`; `None` when
    /// there is none.
    pub(crate) fn first<T>(
        &self,
        context: &'static str,
        sql: &str,
        args: &[Arg<'_>],
        row: impl FnOnce(&Cells<'_>) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let mut row = Some(row);
        let mut out = None;
        self.each(context, sql, args, |cells| {
            if let Some(row) = row.take() {
                out = Some(row(cells)?);
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// One row of a query's result.
pub(crate) enum Cells<'r> {
    /// From SQLite.
    Sqlite(&'r rusqlite::Row<'r>),
    /// From PostgreSQL.
    #[cfg(feature = "postgres")]
    Postgres(&'r ::postgres::Row),
}

impl Cells<'_> {
    /// Column `i` as an integer, `None` when null.
    pub(crate) fn int(&self, i: usize) -> Result<Option<i64>, DatabaseError> {
        match self {
            Cells::Sqlite(row) => match row.get_ref(i)? {
                ValueRef::Integer(value) => Ok(Some(value)),
                ValueRef::Null => Ok(None),
                _ => Err(DatabaseError::Type { column: i, expected: "an integer" }),
            },
            #[cfg(feature = "postgres")]
            Cells::Postgres(row) => crate::postgres::int(row, i),
        }
    }

    /// Column `i` as text, `None` when null.
    pub(crate) fn text(&self, i: usize) -> Result<Option<&str>, DatabaseError> {
        match self {
            Cells::Sqlite(row) => match row.get_ref(i)? {
                ValueRef::Text(bytes) => std::str::from_utf8(bytes)
                    .map(Some)
                    .map_err(|_| DatabaseError::Type { column: i, expected: "text" }),
                ValueRef::Null => Ok(None),
                _ => Err(DatabaseError::Type { column: i, expected: "text" }),
            },
            #[cfg(feature = "postgres")]
            Cells::Postgres(row) => Ok(row.try_get(i)?),
        }
    }

    /// Column `i` as bytes, `None` when null.
    pub(crate) fn bytes(&self, i: usize) -> Result<Option<&[u8]>, DatabaseError> {
        match self {
            Cells::Sqlite(row) => match row.get_ref(i)? {
                ValueRef::Blob(bytes) => Ok(Some(bytes)),
                ValueRef::Null => Ok(None),
                _ => Err(DatabaseError::Type { column: i, expected: "bytes" }),
            },
            #[cfg(feature = "postgres")]
            Cells::Postgres(row) => Ok(row.try_get(i)?),
        }
    }

    /// Column `i` as a non-null integer.
    pub(crate) fn int_of(&self, i: usize) -> Result<i64, DatabaseError> {
        self.int(i)?.ok_or(DatabaseError::Type { column: i, expected: "an integer" })
    }

    /// Column `i` as non-null text, owned.
    pub(crate) fn string(&self, i: usize) -> Result<String, DatabaseError> {
        Ok(self.text(i)?.ok_or(DatabaseError::Type { column: i, expected: "text" })?.to_owned())
    }

    /// Column `i` as text, owned, `None` when null.
    pub(crate) fn opt_string(&self, i: usize) -> Result<Option<String>, DatabaseError> {
        Ok(self.text(i)?.map(str::to_owned))
    }
}
