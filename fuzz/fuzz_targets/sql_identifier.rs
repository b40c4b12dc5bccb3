//! Names that go into SQL unquoted (schemas, the lease table): every emitter accepts exactly
//! the names a reference rule accepts (1 to 40 bytes of a-z, 0-9 and _, not starting with a
//! digit or pg_), so no text from a user can reach the SQL as anything but a plain name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shardid::Layout;
use shardid::sql::{
    Dictionary, LeaseKind, LeaseProtocol, Placeholders, Postgres, PostgresUninstall, Segments,
};

fn reference(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 40
        && !b[0].is_ascii_digit()
        && !name.starts_with("pg_")
        && b.iter()
            .all(|c| matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'_'))
}

fuzz_target!(|data: &[u8]| {
    let Ok(name) = std::str::from_utf8(data) else {
        return;
    };
    let ok = reference(name);
    assert_eq!(
        Postgres::new(Layout::INSTAGRAM, 1, name).is_ok(),
        ok,
        "{name:?}"
    );
    assert_eq!(Segments::new(name).is_ok(), ok, "{name:?}");
    assert_eq!(Dictionary::new(name).is_ok(), ok, "{name:?}");
    assert_eq!(PostgresUninstall::new(name).is_ok(), ok, "{name:?}");
    assert_eq!(
        LeaseProtocol::new(
            LeaseKind::DEFAULT,
            Layout::INSTAGRAM,
            name,
            Placeholders::Numbered,
            0,
            1,
            "h",
            "t"
        )
        .is_ok(),
        ok,
        "{name:?}"
    );
    if ok {
        // Rendering never panics, and the name appears as itself.
        let ddl = Postgres::new(Layout::INSTAGRAM, 1, name)
            .unwrap()
            .to_string();
        assert!(ddl.contains(&format!("{name}.")));
    }
});
