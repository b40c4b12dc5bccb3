//! The DDL that removes what [`super::Postgres`] installed.

use core::fmt::{self, Display, Formatter};

use super::{SqlError, check_schema};

/// The DDL that removes what [`Postgres`](super::Postgres) installed in `schema` (its functions and its state),
/// leaving the schema itself and anything else in it. Render it with [`Display`].
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct PostgresUninstall<'a> {
    schema: &'a str,
}

impl<'a> PostgresUninstall<'a> {
    /// # Errors
    /// [`SqlError::SchemaName`], as for [`Postgres::new`](super::Postgres::new).
    pub fn new(schema: &'a str) -> Result<Self, SqlError> {
        check_schema(schema)?;
        Ok(Self { schema })
    }
}

/// Every function the install creates, with its argument types, dependents first.
const FUNCTIONS: [&str; 16] = [
    "next_id()",
    "shardid_from_uuid(uuid)",
    "shardid_uuid_refused(uuid)",
    "shardid_to_uuid(bigint)",
    "shardid_on_timeline()",
    "shardid_ready(bigint)",
    "shardid_max_id_at(timestamptz)",
    "shardid_min_id_at(timestamptz)",
    "shardid_unix_ms(timestamptz)",
    "shardid_max_id_at_ms(bigint)",
    "shardid_min_id_at_ms(bigint)",
    "shardid_sequence(bigint)",
    "shardid_shard(bigint)",
    "shardid_timestamp(bigint)",
    "shardid_timestamp_ms(bigint)",
    "shardid_raise(text, text)",
];

impl Display for PostgresUninstall<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_uninstall(
            f,
            self.schema,
            "functions and state",
            &FUNCTIONS,
            &[
                ("SEQUENCE", "shardid_counter_even"),
                ("SEQUENCE", "shardid_counter_odd"),
                ("TABLE", "shardid_timeline"),
            ],
        )
    }
}

/// The DDL that removes one of shardid's installs (`what` it removes) from PostgreSQL's
/// `schema`: each of `functions` (`SCHEMA` in a signature is the schema), then each of
/// `objects` (`(kind, name)`), dependents first.
pub(super) fn write_uninstall(
    f: &mut Formatter<'_>,
    schema: &str,
    what: &str,
    functions: &[&str],
    objects: &[(&str, &str)],
) -> fmt::Result {
    writeln!(f, "-- Removes shardid's {what} from schema {schema}.")?;
    for function in functions {
        let function = function.replace("SCHEMA", schema);
        writeln!(f, "DROP FUNCTION IF EXISTS {schema}.{function};")?;
    }
    for (kind, name) in objects {
        writeln!(f, "DROP {kind} IF EXISTS {schema}.{name};")?;
    }
    Ok(())
}
