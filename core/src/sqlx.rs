//! IDs as sqlx column values (feature `sqlx`): [`Id`], a `u64` that is `sqlx::Type`, `Encode`
//! and `Decode` on every database whose sqlx driver maps `i64` — PostgreSQL's and the MySQL
//! family's `BIGINT`, SQLite's `INTEGER` — so a query binds and reads IDs without a cast.
//!
//! Why a newtype: IDs are plain `u64` in this crate, and Rust's orphan rule lets neither this
//! crate nor the application implement sqlx's traits for `u64`; sqlx itself maps `u64` only on
//! MySQL's `BIGINT UNSIGNED`. Every column this crate's SQL makes holds IDs in a signed
//! `BIGINT` (`next_id()` returns one on PostgreSQL and the MySQL family alike), so [`Id`] goes
//! through sqlx's own `i64` on each database: the same wire type, the same checks of a column's
//! type (a `BIGINT UNSIGNED`, a `TEXT` is a type mismatch, as for `i64`). The impls are
//! generic over the database, so this feature turns on no sqlx driver: the application's sqlx,
//! with the drivers it chose, brings them (sqlx 0.9; that release needs Rust 1.94).
//!
//! An ID above `i64::MAX` (an unsigned layout's, such as Discord's after 2084) has no signed
//! `BIGINT`: binding it is refused ([`RangeError`], of the kind `INVALID_ID`), never stored
//! wrapped to a negative number that sorts first; a negative value read back is refused the
//! same way. An
//! application's own ID type can wrap it: `#[derive(sqlx::Type)] #[sqlx(transparent)] struct
//! OrderId(shardid::sqlx::Id);` (sqlx's `derive` feature).
//!
//! ```no_run
//! # async fn run(pool: sqlx::AnyPool, id: u64) -> Result<(), sqlx::Error> {
//! use shardid::sqlx::Id;
//!
//! // The same on a `PgPool`, a `MySqlPool`, a `SqlitePool` or a transaction (MySQL writes its
//! // placeholders `?`).
//! sqlx::query("INSERT INTO orders (id) VALUES ($1)").bind(Id(id)).execute(&pool).await?;
//! let back: Id = sqlx::query_scalar("SELECT id FROM orders").fetch_one(&pool).await?;
//! assert_eq!(u64::from(back), id);
//! # Ok(()) }
//! ```

use core::fmt;

use ::sqlx::database::Database;
use ::sqlx::encode::IsNull;
use ::sqlx::error::BoxDynError;
use ::sqlx::{Decode, Encode, Type};

use crate::Error;

/// Why an [`Id`] was not bound or read: the signed `BIGINT` it is stored as holds IDs from 0
/// to `i64::MAX`. Its kind is the core's `INVALID_ID` ([`RangeError::error`]); it is what the
/// sqlx error's source downcasts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RangeError {
    /// An ID above `i64::MAX` (an unsigned layout's): not bound.
    TooLarge {
        /// The ID.
        id: u64,
    },
    /// A negative value read from the column: no ID is stored so.
    Negative {
        /// The value read.
        value: i64,
    },
}

impl RangeError {
    /// The core's error: [`Error::InvalidId`] with the value's bits as an unsigned number.
    pub const fn error(self) -> Error {
        match self {
            Self::TooLarge { id } => Error::InvalidId { id },
            Self::Negative { value } => Error::InvalidId {
                id: value.cast_unsigned(),
            },
        }
    }
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TooLarge { id } => write!(
                f,
                "ID {id} does not fit a signed BIGINT (at most 2^63 - 1 = {}): not bound",
                i64::MAX
            ),
            Self::Negative { value } => write!(
                f,
                "the column holds {value}, which is no ID (IDs are 0 to 2^63 - 1)"
            ),
        }
    }
}

impl core::error::Error for RangeError {}

/// An ID as a sqlx column value: a signed `BIGINT` (SQLite's `INTEGER`) holding `0..=i64::MAX`.
/// See the [module](self) docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Id(pub u64);

impl Id {
    /// The ID as the signed `BIGINT` it is stored as.
    ///
    /// # Errors
    /// [`RangeError::TooLarge`] above `i64::MAX`: no signed column holds it.
    pub fn to_i64(self) -> Result<i64, RangeError> {
        i64::try_from(self.0).map_err(|_| RangeError::TooLarge { id: self.0 })
    }

    /// The ID a signed `BIGINT` holds.
    ///
    /// # Errors
    /// [`RangeError::Negative`] for a negative value: no ID is stored so.
    pub fn from_i64(value: i64) -> Result<Self, RangeError> {
        u64::try_from(value)
            .map(Self)
            .map_err(|_| RangeError::Negative { value })
    }
}

impl From<u64> for Id {
    fn from(id: u64) -> Self {
        Self(id)
    }
}

impl From<Id> for u64 {
    fn from(id: Id) -> Self {
        id.0
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl<DB: Database> Type<DB> for Id
where
    i64: Type<DB>,
{
    fn type_info() -> DB::TypeInfo {
        <i64 as Type<DB>>::type_info()
    }

    fn compatible(ty: &DB::TypeInfo) -> bool {
        <i64 as Type<DB>>::compatible(ty)
    }
}

impl<'q, DB: Database> Encode<'q, DB> for Id
where
    i64: Encode<'q, DB>,
{
    fn encode_by_ref(
        &self,
        buf: &mut <DB as Database>::ArgumentBuffer,
    ) -> Result<IsNull, BoxDynError> {
        // Refused before anything is written: the buffer holds no half of an argument.
        <i64 as Encode<'q, DB>>::encode(self.to_i64()?, buf)
    }

    fn size_hint(&self) -> usize {
        core::mem::size_of::<i64>()
    }
}

impl<'r, DB: Database> Decode<'r, DB> for Id
where
    i64: Decode<'r, DB>,
{
    fn decode(value: <DB as Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(Self::from_i64(<i64 as Decode<'r, DB>>::decode(value)?)?)
    }
}

#[cfg(test)]
mod tests {
    //! Through sqlx's `Any` database, which needs no driver: the generic impls every database
    //! runs, beside the values sqlx's own `i64` writes and reads. (`AnyArguments::values` and
    //! `AnyValue::kind` are public but hidden from sqlx's docs: the only way to a value without
    //! a connection.)
    use std::format;
    use std::string::{String, ToString};

    use ::sqlx::any::{Any, AnyArguments, AnyValue};
    use ::sqlx::{Arguments, Decode, Encode, Type, Value};

    use super::{Id, RangeError};
    use crate::{Error, ErrorKind, Layout};

    /// What binding `v` writes.
    fn bound<'q, T: Encode<'q, Any> + Type<Any>>(v: T) -> Result<AnyArguments, String> {
        let mut args = AnyArguments::default();
        args.add(v).map_err(|e| e.to_string())?;
        Ok(args)
    }

    /// The column value sqlx reads where `i64` `v` was stored.
    fn stored(v: i64) -> AnyValue {
        let kind = bound(v).unwrap().values.0.pop().expect("one value");
        AnyValue { kind }
    }

    fn read(v: i64) -> Result<Id, ::sqlx::error::BoxDynError> {
        let value = stored(v);
        <Id as Decode<'_, Any>>::decode(value.as_ref())
    }

    #[test]
    fn ids_are_bound_and_read_as_the_bigint_they_are() {
        for id in [0, 1, 1_288_834_974_657 << 22, i64::MAX.cast_unsigned()] {
            let as_id = bound(Id(id)).expect("fits a BIGINT");
            let as_i64 = bound(id.cast_signed()).unwrap();
            assert_eq!(
                format!("{:?}", as_id.values.0),
                format!("{:?}", as_i64.values.0)
            );
            assert_eq!(read(id.cast_signed()).unwrap(), Id(id));
        }
        assert_eq!(
            <Id as Type<Any>>::type_info(),
            <i64 as Type<Any>>::type_info()
        );
    }

    /// An unsigned layout's ID past `i64::MAX` is refused, as `INVALID_ID`, and nothing is
    /// written: bound as sqlx's `i64` it would be stored negative, sorting before every other
    /// ID, and read back as another number.
    #[test]
    fn an_id_past_i64_max_is_refused_not_wrapped() {
        assert!(!Layout::DISCORD.signed());
        for id in [1 << 63, u64::MAX] {
            let mut args = AnyArguments::default();
            let Err(err) = args.add(Id(id)) else {
                panic!("{id} was bound: no signed BIGINT holds it");
            };
            assert_eq!(args.len(), 0);
            let refused = err.downcast_ref::<RangeError>().copied();
            assert_eq!(refused, Some(RangeError::TooLarge { id }), "{err}");
            assert_eq!(refused.unwrap().error(), Error::InvalidId { id });
            assert_eq!(refused.unwrap().error().kind(), ErrorKind::InvalidId);
            assert!(
                err.to_string()
                    .contains(&format!("ID {id} does not fit a signed BIGINT")),
                "{err}"
            );
        }
    }

    #[test]
    fn a_negative_bigint_is_no_id() {
        for v in [-1, i64::MIN] {
            let err = read(v).expect_err("no ID is negative");
            assert_eq!(
                err.downcast_ref::<RangeError>(),
                Some(&RangeError::Negative { value: v }),
            );
            assert!(err.to_string().contains("which is no ID"), "{err}");
        }
        // Another type is sqlx's own refusal, as for `i64`.
        let value = AnyValue {
            kind: bound("12").unwrap().values.0.pop().unwrap(),
        };
        assert!(<Id as Decode<'_, Any>>::decode(value.as_ref()).is_err());
    }
}
