//! The `shardid` command line (`shardid::cli`), which the Python and npm packages run as is.
#![cfg(all(feature = "std", feature = "sql"))]

use shardid::Layout;
use shardid::cli::{Output, StatusRun, parse_time, rfc3339, run, wants_stdin};

fn cli(args: &[&str]) -> Output {
    run(args, None)
}

/// Asserts `text` holds `part`; the message shows the whole text.
#[track_caller]
fn assert_has(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} is not in:\n{text}");
}

#[test]
fn decode_prints_time_shard_and_sequence_and_refuses_bad_ids_with_status_1() {
    // Instagram's blog post: 2011-08-24T21:07:01.721Z... its worked example.
    let id = Layout::INSTAGRAM
        .compose(1_387_263_000_000, 1_341, 7)
        .unwrap();
    let out = cli(&["decode", &id.to_string()]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        format!("{id}  2013-12-17T06:50:00.000Z  shard 1341  sequence 7\n")
    );
    let out = cli(&[
        "decode",
        "--json",
        &id.to_string(),
        "+5",
        "9223372036854775808",
    ]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        format!(
            "{{\"id\":\"{id}\",\"timestamp_ms\":1387263000000,\"time\":\"2013-12-17T06:50:00.000Z\",\"shard\":1341,\"sequence\":7}}\n"
        )
    );
    assert_eq!(out.stderr.lines().count(), 2, "{}", out.stderr);
    assert!(
        out.stderr.starts_with("shardid: +5: not a decimal integer"),
        "{}",
        out.stderr
    );
    assert_has(&out.stderr, "9223372036854775808 is not a valid ID");
    // A huge argument is cut in the message.
    let huge = "7".repeat(10_000);
    assert!(cli(&["decode", &huge]).stderr.len() < 200);
}

#[test]
fn decode_reads_ids_from_stdin_only_when_none_are_given() {
    assert!(wants_stdin(&["decode"]));
    assert!(wants_stdin(&["decode", "--layout", "twitter"]));
    assert!(!wants_stdin(&["decode", "5"]));
    assert!(!wants_stdin(&["bounds", "0"]));
    assert!(!wants_stdin(&[]));
    let out = run(
        &["decode", "--layout", "twitter"],
        Some("1541815603606036480\n  5 \n"),
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        out.stdout,
        "1541815603606036480  2022-06-28T16:07:40.105Z  shard 378  sequence 0\n\
         5  2010-11-04T01:42:54.657Z  shard 0  sequence 5\n"
    );
}

#[test]
fn bounds_give_the_ids_of_a_time_range() {
    let out = cli(&["bounds", "2026-11-24", "2026-11-24T23:59:59.999Z"]);
    assert_eq!(out.code, 0, "{out:?}");
    let from = parse_time("2026-11-24").unwrap();
    let to = parse_time("2026-11-24T23:59:59.999Z").unwrap();
    assert_eq!(to - from, 86_399_999);
    let (min, max) = (
        Layout::INSTAGRAM.min_id_at(from).unwrap(),
        Layout::INSTAGRAM.max_id_at(to).unwrap(),
    );
    assert_eq!(out.stdout, format!("{min} {max}\n"));
    assert_eq!(
        cli(&["bounds", &from.to_string()]).stdout,
        format!("{min} {}\n", Layout::INSTAGRAM.max_id_at(from).unwrap())
    );
    let out = cli(&["bounds", "--json", "--layout", "discord", "2015-01-01"]);
    assert_eq!(
        out.stdout,
        "{\"min\":\"0\",\"max\":\"4194303\",\"from\":\"2015-01-01T00:00:00.000Z\",\"to\":\"2015-01-01T00:00:00.000Z\"}\n"
    );
    // Before the epoch is a refused input; a malformed time a usage error.
    assert_eq!(cli(&["bounds", "2000-01-01"]).code, 1);
    for bad in [
        "2026-13-01",
        "2026-02-30",
        "2026-11-24T24:00:00Z",
        "2026-11-24T05:00:00",
        "yesterday",
    ] {
        assert_eq!(cli(&["bounds", bad]).code, 2, "{bad}");
    }
    assert_eq!(cli(&["bounds", "2026-11-24", "2026-11-23"]).code, 2);
}

#[test]
fn times_round_trip_through_rfc3339() {
    for ms in [
        0,
        951_782_400_000,
        1_709_164_800_123,
        4_102_444_799_999,
        253_402_300_799_999,
    ] {
        assert_eq!(parse_time(&rfc3339(ms)), Some(ms), "{}", rfc3339(ms));
    }
    assert_eq!(rfc3339(1_288_834_974_657), "2010-11-04T01:42:54.657Z");
    assert_eq!(
        parse_time("2024-02-29 12:00:00.5+00:00"),
        Some(1_709_208_000_500)
    );
}

#[test]
fn layout_prints_its_numbers_and_whether_ids_fit_a_javascript_number() {
    let out = cli(&["layout", "instagram"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_has(&out.stdout, "ids_per_second_per_shard  1024000\n");
    assert!(out.stdout.contains("shards                    8192\n"));
    assert_has(
        &out.stdout,
        "expires                   2046-06-27T17:00:49.496Z",
    );
    assert!(out.stdout.contains("fits_a_javascript_number  false\n"));
    // A layout below 2^53: 38 bits of 10 ms, 6 shard bits, 8 sequence bits.
    let out = cli(&[
        "layout",
        "--json",
        "--epoch-ms",
        "1700000000000",
        "--unit-ms",
        "10",
        "--bits",
        "38,6,8",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_has(&out.stdout, "\"fits_a_javascript_number\":true");
    assert_has(&out.stdout, "\"ids_per_second_per_shard\":25600");
    assert!(out.stdout.contains("\"name\":\"custom\""));
    assert_eq!(cli(&["layout", "nope"]).code, 2);
    assert_eq!(
        cli(&["layout", "--bits", "60,10,10", "--epoch-ms", "0"]).code,
        2
    );
}

#[test]
fn new_makes_distinct_ids_of_its_shard() {
    assert_eq!(cli(&["new"]).code, 2, "a shard must be given");
    let out = cli(&["new", "--shard", "77", "-n", "1000"]);
    assert_eq!(out.code, 0, "{out:?}");
    let ids: Vec<u64> = out.stdout.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 1000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(
        ids.iter()
            .all(|&id| Layout::INSTAGRAM.decode(id).unwrap().shard == 77)
    );
    assert_eq!(cli(&["new", "--shard", "8192"]).code, 2);
}

#[test]
fn shard_prints_a_statefulset_pods_shard_or_refuses() {
    let out = cli(&["shard", "--shards", "0..64", "--hostname", "app-3"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "3\n"), "{out:?}");
    let out = cli(&[
        "shard",
        "--shards",
        "16..32",
        "--hostname",
        "worker-17.worker.default.svc",
    ]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "17\n"), "{out:?}");
    // Refused inputs: exit 1, the core's words on stderr, nothing on stdout.
    for (hostname, words) in [
        ("app-03", "leading zero"),
        ("app", "expected <statefulset>-<ordinal>"),
        ("app-3", "outside the shards"),
    ] {
        let out = cli(&["shard", "--shards", "16..32", "--hostname", hostname]);
        assert_eq!((out.code, out.stdout.as_str()), (1, ""), "{out:?}");
        assert_has(&out.stderr, words);
    }
    let out = cli(&[
        "shard",
        "--shards",
        "0..4",
        "--layout",
        "twitter",
        "--hostname",
        "app-1024",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_has(&out.stderr, "shard 1024 is out of range");
    // Usage errors: exit 2.
    assert_eq!(
        cli(&["shard", "--hostname", "app-3"]).code,
        2,
        "--shards is required"
    );
    assert_eq!(
        cli(&["shard", "--shards", "0-16", "--hostname", "app-3"]).code,
        2
    );
    assert_eq!(cli(&["shard", "--shards", "0..16", "app-3"]).code, 2);
    assert_eq!(cli(&["shard", "--shards", "0..16", "-n", "3"]).code, 2);
}

#[test]
fn sql_prints_the_ddl_the_libraries_print() {
    let out = cli(&[
        "sql",
        "--schema",
        "insta5",
        "--layout",
        "instagram",
        "--shard",
        "5",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let ddl = shardid::sql::Postgres::new(Layout::INSTAGRAM, 5, "insta5")
        .unwrap()
        .to_string();
    assert_eq!(out.stdout, ddl);
    let out = cli(&[
        "sql",
        "--schema",
        "seg",
        "--segments",
        "--servers",
        "2",
        "--index",
        "1",
    ]);
    let seg = shardid::sql::Segments::new("seg")
        .unwrap()
        .ticket_server(2, 1)
        .unwrap()
        .to_string();
    assert_eq!(out.stdout, seg);
    let out = cli(&["sql", "--schema", "dict", "--dictionary"]);
    assert_eq!(
        out.stdout,
        shardid::sql::Dictionary::new("dict").unwrap().to_string()
    );
    let out = cli(&["sql", "--schema", "seg", "--serials", "--dialect", "mysql"]);
    assert_eq!(
        out.stdout,
        shardid::sql::mysql::MysqlSerials::new("seg")
            .unwrap()
            .to_string()
    );
    let out = cli(&["sql", "--schema", "seg", "--serials"]);
    assert!(
        out.code == 2 && out.stderr.contains("--dialect mysql"),
        "{out:?}"
    );
    assert_eq!(cli(&["sql", "--schema", "x; drop", "--shard", "1"]).code, 2);
    assert_eq!(
        cli(&["sql", "--schema", "dict", "--dictionary", "--shard", "1"]).code,
        2
    );
}

#[test]
fn usage_errors_say_what_is_wrong_with_status_2() {
    for (args, says) in [
        (&[][..], "usage: shardid"),
        (&["frobnicate"][..], "unknown command"),
        (&["decode", "--lay", "x"][..], "unknown option --lay"),
        (&["decode", "--layout"][..], "--layout needs a value"),
        (&["decode", "--layout", "nope", "5"][..], "is not a preset"),
        (
            &["decode", "--layout", "twitter", "--layout", "discord", "5"][..],
            "given twice",
        ),
        (
            &["decode", "--shard", "5", "5"][..],
            "--shard does not apply here",
        ),
    ] {
        let out = cli(args);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty());
    }
    assert_eq!(cli(&["--help"]).code, 0);
    assert!(cli(&["--version"]).stdout.starts_with("shardid "));
}

#[test]
fn the_book_shows_what_the_command_line_prints() {
    let page = include_str!("../../docs/src/reference/cli.md");
    let mut checked = 0;
    let lines: Vec<&str> = page.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(command) = line.strip_prefix("$ shardid ") else {
            continue;
        };
        let command = command.split("  #").next().unwrap().trim();
        let args: Vec<&str> = command.split_whitespace().collect();
        let expected = lines[i + 1];
        if expected.starts_with('$') || expected.starts_with("```") || args.contains(&"|") {
            continue; // no output shown
        }
        if args.contains(&"--key-file") {
            continue; // the key file is the page's (tests/docs/snippets.py runs the page)
        }
        assert_eq!(
            cli(&args).stdout,
            format!("{expected}\n"),
            "docs/src/reference/cli.md: $ shardid {command}"
        );
        checked += 1;
    }
    assert_eq!(checked, 3);
}

/// A key file in a directory of its own: (the directory, the file's path).
fn key_file(name: &str, contents: &[u8]) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("shardid-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("key");
    std::fs::write(&path, contents).unwrap();
    // Private, as a key file should be (a file others may read gets a warning).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    (dir, path.to_str().unwrap().to_owned())
}

/// `public <command>` with the key file `key`, the prefix `note` and base58, then `rest`: the
/// options of the round-trip tests.
fn public_note<'a>(command: &'a str, key: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let options = ["--prefix", "note", "--encoding", "base58"];
    public_args(command, key, &[&options[..], rest].concat())
}

/// `public <command> --key-file <key>`, then `rest`.
fn public_args<'a>(command: &'a str, key: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    [&["public", command, "--key-file", key][..], rest].concat()
}

/// The IDs the round-trip tests encode, `a` (a large one) and `b` = 5, and their public forms
/// `ta`, `tb` under the raw key `0123456789abcdef` and the prefix `note`.
fn note_ids() -> (
    shardid::PublicIds,
    u64,
    u64,
    shardid::PublicId,
    shardid::PublicId,
) {
    use shardid::{Encoding, PublicIds};
    let ids = PublicIds::new(b"0123456789abcdef", 0, "note", Encoding::Base58).unwrap();
    let (a, b) = (4_036_916_263_258_161_152u64, 5u64);
    let (ta, tb) = (ids.encode(a).unwrap(), ids.encode(b).unwrap());
    (ids, a, b, ta, tb)
}

#[test]
fn public_encodes_and_decodes_as_the_library_does() {
    let (dir, key) = key_file("raw", b"0123456789abcdef");
    let (_, a, b, ta, tb) = note_ids();
    let out = cli(&public_note("encode", &key, &[&a.to_string(), "5"]));
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, format!("{ta}\n{tb}\n").as_str()),
        "{out:?}"
    );
    let out = cli(&public_note("decode", &key, &[&ta, &tb]));
    assert_eq!(out.stdout, format!("{a}\n{b}\n"), "{out:?}");
    // From stdin when no value is given; JSON lines.
    assert!(wants_stdin(&["public", "decode", "--key-file", &key]));
    assert!(!wants_stdin(&["public", "decode", "--key-file", &key, &ta]));
    assert!(!wants_stdin(&["public"]));
    let decode = public_note("decode", &key, &["--json"]);
    let out = run(&decode, Some(&format!("{ta}\n  {tb}\n")));
    assert_eq!(
        out.stdout,
        format!(
            "{{\"id\":\"{a}\",\"public_id\":\"{ta}\"}}\n{{\"id\":\"{b}\",\"public_id\":\"{tb}\"}}\n"
        )
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn public_refuses_values_and_goes_on() {
    use shardid::{Encoding, PublicIds};
    let (dir, key) = key_file("refuse", b"0123456789abcdef");
    let (ids, a, _, ta, tb) = note_ids();
    let decode = public_note("decode", &key, &["--json"]);
    // Refused values are reported, the others still printed, and the status is 1; no
    // message shows a decoded value.
    let user = PublicIds::new(b"0123456789abcdef", 0, "user", Encoding::Base58).unwrap();
    let other = PublicIds::new(b"fedcba9876543210", 0, "note", Encoding::Base58).unwrap();
    let out = run(
        &decode,
        Some(&format!(
            "{ta} {} note_1 {} {tb}",
            user.encode(a).unwrap(),
            other.encode(a).unwrap()
        )),
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stdout.lines().count(),
        2 + usize::from(
            other
                .encode(a)
                .ok()
                .and_then(|t| ids.decode(&t).ok())
                .is_some()
        )
    );
    assert_has(&out.stderr, "does not start with its type's prefix");
    assert!(out.stderr.contains("wrong length"), "{}", out.stderr);
    let out = cli(&public_args("encode", &key, &["9223372036854775808", "x1"]));
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("9223372036854775808 is not a valid ID")
            && out.stderr.contains("\"x1\" is not a decimal"),
        "{}",
        out.stderr
    );
    // Discord's layout takes all 64 bits.
    let out = cli(&public_args(
        "encode",
        &key,
        &["--layout", "discord", "18446744073709551615"],
    ));
    assert_eq!(out.code, 0, "{out:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn public_keys_as_text_rotate() {
    use shardid::{Encoding, PublicIds};
    let (a, b) = (
        "30313233343536373839616263646566",
        "00112233445566778899aabbccddeeff",
    );
    let (dir, keys) = key_file("text", format!("2:{b},1:{a}\n").as_bytes());
    let old = PublicIds::new(b"0123456789abcdef", 1, "", Encoding::Base32).unwrap();
    let text = old.encode(42).unwrap();
    let out = cli(&public_args("decode", &keys, &[&text]));
    assert_eq!((out.code, out.stdout.as_str()), (0, "42\n"), "{out:?}");
    // Encoding uses the highest version.
    let out = cli(&public_args("encode", &keys, &["42"]));
    assert_eq!(&out.stdout[..1], "2", "{out:?}");
    let out = cli(&public_args("encode", &keys, &["--key-version", "3", "42"]));
    assert_eq!(out.code, 2, "{out:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn public_usage_errors_never_show_the_key() {
    let secret = "my secret passphrase, not a key";
    let (dir, bad) = key_file("bad", secret.as_bytes());
    let (dir2, raw) = key_file("raw2", b"0123456789abcdef");
    for args in [
        vec!["public"],
        vec!["public", "recode", "--key-file", &raw, "5"],
        vec!["public", "encode", "5"],
        public_args("encode", "/nonexistent/shardid-key", &["5"]),
        public_args("encode", &bad, &["5"]),
        public_args("encode", &raw, &["--encoding", "base64", "5"]),
        public_args("encode", &raw, &["--prefix", "Note", "5"]),
        public_args("encode", &raw, &["--key-version", "32", "5"]),
        public_args("encode", &raw, &["--shard", "1", "5"]),
    ] {
        let out = cli(&args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(
            out.stdout.is_empty() && out.stderr.starts_with("shardid: "),
            "{out:?}"
        );
        assert!(
            !out.stderr.contains("secret") && !out.stderr.contains("0123456789"),
            "{}",
            out.stderr
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(dir2).unwrap();
}

/// `status` as a binding runs it: the statements in order, scripted rows back, the output.
#[test]
fn status_runs_statements_and_renders_with_check_and_failures() {
    let url = "postgresql://app:secret@db:5432/app";
    let some = |cells: &[&str]| -> Vec<Option<String>> {
        cells.iter().map(|c| Some((*c).to_string())).collect()
    };
    // A layout of 33 bits of ms from the server's clock: it runs out in 99 days.
    let now = "1795660916827";
    let mut run = shardid::cli::status(&[
        "status",
        url,
        "--check",
        "--epoch-ms",
        now,
        "--bits",
        "33,10,20",
    ])
    .unwrap();
    assert_eq!(run.url(), url);
    assert_eq!(run.family().name(), "postgres");
    assert!(
        run.next()
            .unwrap()
            .contains("to_regclass('\"shardid_leases\"')")
    );
    run.feed(&[some(&[now, "false", "true", "false"])]).unwrap();
    assert!(run.next().unwrap().contains("FROM seg.shardid_tags"));
    run.feed(&[some(&["orders", "2001", "2000", "1", now])])
        .unwrap();
    assert_eq!(run.next(), None);
    let out = run.output();
    assert_eq!(out.code, 1, "{out:?}");
    assert_has(
        &out.stdout,
        "\n  orders 2001 2000    2026-11-26T02:41:56.827Z 33.333     > 1,000\n",
    );
    assert!(
        out.stdout
            .contains("leases (shardid_leases): absent (not installed)")
    );
    assert!(
        out.stdout.ends_with(
            "warning: layout custom runs out on 2027-03-05T12:47:31.418Z, in 0.3 years\n"
        ),
        "{}",
        out.stdout
    );
    // --lease-schema: the lease table by its schema, as the lease's `schema` option names it.
    for command in ["status", "restored"] {
        let run = shardid::cli::status(&[command, url, "--lease-schema", "app"]).unwrap();
        assert!(
            run.next()
                .unwrap()
                .contains("to_regclass('\"app\".\"shardid_leases\"')")
        );
    }
    // A driver's error of several lines: the first, after the URL without its password.
    let failed = run.failed("connection refused\n\tIs the server running?");
    assert_eq!(failed.code, 2);
    assert_eq!(
        failed.stderr,
        "shardid: status: db:5432/app: connection refused\n"
    );
    // Usage errors, and `run` itself (no driver) refuses status with exit 2.
    for args in [
        &["status"][..],
        &["status", "ftp://x"],
        &["status", "mysql://x", "--table", "A"],
        &["status", "mysql://x", "--lease-schema", "A"],
        &["status", "mysql://x", "--lease-schema", "a.b"],
        &["status", "mysql://x", "--dialect", "mysql"],
    ] {
        let out = shardid::cli::status(args).unwrap_err();
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.starts_with("shardid: ") && out.stderr.ends_with('\n'));
    }
    assert_eq!(cli(&["status", url]).code, 2);
}

/// `status` on a SQLite file: its own statements, the file's `main` schema by default, the file
/// for the binding to open read-only; URLs that name no file are usage errors.
#[test]
fn status_on_sqlite_reads_main_and_refuses_what_names_no_file() {
    let mut run = shardid::cli::status(&["status", "sqlite:////var/app/db.sqlite3"]).unwrap();
    assert_eq!(run.family().name(), "sqlite");
    assert_eq!(run.sqlite_path(), Some("/var/app/db.sqlite3"));
    assert!(run.next().unwrap().contains("pragma_database_list"));
    run.feed(&[vec![Some("main".to_string())]]).unwrap();
    let probe = run.next().unwrap();
    assert!(
        probe.contains("main.sqlite_master") && !probe.contains("seg.") && !probe.contains("dict."),
        "{probe}"
    );
    let relative =
        shardid::cli::status(&["status", "sqlite:///app.db", "--schema", "main"]).unwrap();
    assert_eq!(relative.sqlite_path(), Some("app.db"));
    let postgres = shardid::cli::status(&["status", "postgresql://h/d"]).unwrap();
    assert_eq!(postgres.sqlite_path(), None);
    for (args, says) in [
        (&["status", "sqlite://"][..], "in-memory"),
        (&["status", "sqlite:///:memory:"], "in-memory"),
        (&["status", "sqlite://host/x.db"], "names no host"),
        (&["status", "sqlite:///x.db?mode=ro"], "query string"),
        (&["restored", "sqlite://"], "in-memory"),
    ] {
        let out = shardid::cli::status(args).unwrap_err();
        assert_eq!(out.code, 2, "{args:?}");
        assert!(
            out.stderr.starts_with("shardid: ") && out.stderr.contains(says),
            "{args:?}: {}",
            out.stderr
        );
    }
}

#[test]
fn a_key_file_of_no_accepted_form_is_refused_naming_every_form_as_the_page_does() {
    // 15 raw bytes (a key cut short), 17 bytes of text, 20 bytes of binary: each message names
    // the 16 raw bytes, the hex digits and the VERSION:HEX pairs, in the words of the page.
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/src/reference/cli.md"
    ))
    .unwrap();
    let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        page.contains(shardid::cli::KEY_FILE_FORMS),
        "docs/src/reference/cli.md must say: {}",
        shardid::cli::KEY_FILE_FORMS
    );
    let (dir, short) = key_file("short", b"0123456789abcde");
    let (dir2, text) = key_file("text17", b"0123456789abcdefg");
    let (dir3, binary) = key_file("binary", &[0xff; 20]);
    for (path, n) in [(&short, 15), (&text, 17), (&binary, 20)] {
        let out = cli(&public_args("encode", path, &["5"]));
        assert_eq!(out.code, 2, "{out:?}");
        assert_eq!(
            out.stderr,
            format!(
                "shardid: --key-file {path:?} holds {n} bytes, neither a key nor keys as text: {}\n",
                shardid::cli::KEY_FILE_FORMS
            )
        );
        for form in ["16 raw bytes", "32 hex digits", "VERSION:HEX"] {
            assert!(out.stderr.contains(form), "{}", out.stderr);
        }
    }
    let out = cli(&["public", "encode", "5"]);
    assert_has(&out.stderr, shardid::cli::KEY_FILE_FORMS);
    for d in [dir, dir2, dir3] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

/// The status run of the Python and Node APIs: a family's own name, or the URL's database by the
/// core's one rule; what it refuses is named, as both bindings report it (`INVALID_ARGUMENT`).
#[test]
fn the_apis_status_run_takes_a_family_or_a_url_and_names_what_it_refuses() {
    let run = |family, url, table| {
        StatusRun::on_connection(family, url, table, None, None, None, Layout::INSTAGRAM)
    };
    for (family, url) in [
        (Some("postgres"), ""),
        (Some("mysql"), ""),
        (Some("sqlite"), ""),
        (None, "postgresql://app@db/app"),
        (None, "mariadb://app@db/app"),
        (None, "sqlite:///ids.db"),
    ] {
        assert!(
            run(family, url, "shardid_leases").is_ok(),
            "{family:?} {url}"
        );
    }
    for (family, url, table, argument) in [
        (Some("mariadb"), "", "shardid_leases", "family"),
        (Some("postgresql"), "", "shardid_leases", "family"),
        (Some("oracle"), "", "shardid_leases", "family"),
        (
            None,
            "postgresql+psycopg://app@db/app",
            "shardid_leases",
            "database",
        ),
        (None, "sqlite://:memory:", "shardid_leases", "database"),
        (Some("postgres"), "", "Leases; DROP", "table"),
    ] {
        let refused = run(family, url, table).err().map(|(argument, _)| argument);
        assert_eq!(refused, Some(argument), "{family:?} {url} {table}");
    }
}

/// Every password form of issue 60 (finding 6) given to `status` and `restored`: no output
/// shows it, neither the URL nor a driver's words that quote it (libpq's "invalid
/// percent-encoded token", an echoed connection string), nor a usage error.
#[test]
fn status_and_restored_never_print_a_password() {
    // (URL, the password as written, as the driver reads it)
    let forms = [
        ("postgresql://alice:p@ss@127.0.0.1:1/app", "p@ss", "p@ss"),
        (
            "postgresql://alice:pw%40rd%2F1@127.0.0.1:1/app",
            "pw%40rd%2F1",
            "pw@rd/1",
        ),
        (
            "postgresql://127.0.0.1:1/app?password=qu3ry&sslmode=disable",
            "qu3ry",
            "qu3ry",
        ),
        (
            "host=127.0.0.1 port=1 dbname=app password = c0nninfo",
            "c0nninfo",
            "c0nninfo",
        ),
        (
            "host=127.0.0.1 port=1 dbname=app password='a b'",
            "a b",
            "a b",
        ),
        (
            "postgresql://alice:s3cr%zzet@127.0.0.1:1/app",
            "s3cr%zzet",
            "s3cr%zzet",
        ),
        ("mysql://root:my@pw@127.0.0.1:1/app", "my@pw", "my@pw"),
    ];
    for (url, written, plain) in forms {
        let driver = format!(
            "invalid connection string {url:?}: invalid percent-encoded token: \"{written}\" \
             (password {plain:?})\nsecond line {plain}"
        );
        let mut seen = String::new();
        for command in ["status", "restored"] {
            let run = shardid::cli::status(&[command, url]).expect(url);
            let failed = run.failed(&driver);
            assert_eq!(failed.code, 2);
            assert!(
                failed
                    .stderr
                    .starts_with(&format!("shardid: {command}: 127.0.0.1:1/app: ")),
                "{}",
                failed.stderr
            );
            seen += &failed.stderr;
            seen += &failed.stdout;
            for args in [
                &[command, url, "--table", "A"][..],
                &[command, url, "extra"],
                &[command, url, "--dialect", "x"],
            ] {
                let out = shardid::cli::status(args).unwrap_err();
                seen += &out.stderr;
                seen += &out.stdout;
            }
            let out = cli(&[command, url]);
            seen += &out.stderr;
            seen += &out.stdout;
        }
        for secret in [written, plain, "s3cr"] {
            assert!(!seen.contains(secret), "{url}: {secret:?} in {seen}");
        }
    }
}

/// A key file is read only up to a bound (issue 60, finding 9): `/dev/zero`, or any file larger
/// than a key file can be, is refused at once with the accepted forms; one that group or others
/// may read or write is used, with a warning on stderr (ssh's rule for private keys, as a
/// warning).
#[cfg(unix)]
#[test]
fn a_key_file_is_read_to_a_bound_and_one_others_may_read_is_warned_of() {
    use std::os::unix::fs::PermissionsExt;
    let started = std::time::Instant::now();
    let out = cli(&public_args("encode", "/dev/zero", &["5"]));
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "shardid: --key-file \"/dev/zero\" holds more than 4096 bytes, not a key file: {}\n",
            shardid::cli::KEY_FILE_FORMS
        )
    );
    // The largest valid key file, and one byte past the bound.
    let longest = (0..4)
        .map(|v| format!("{v}:{}", "ab".repeat(16)))
        .collect::<Vec<_>>()
        .join(",");
    let padded = format!("{longest}{}", " ".repeat(4096 - longest.len()));
    let (dir, fits) = key_file("fits", padded.as_bytes());
    let (dir2, over) = key_file("over", format!("{padded} ").as_bytes());
    let out = cli(&public_args("encode", &fits, &["5"]));
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{out:?}");
    let out = cli(&public_args("encode", &over, &["5"]));
    assert_eq!(out.code, 2, "{out:?}");
    assert_has(&out.stderr, "holds more than 4096 bytes");
    // Readable by group or others: used, with a warning naming the mode; private: no warning.
    let (dir3, key) = key_file("open", b"0123456789abcdef");
    let private = cli(&public_args("encode", &key, &["5"]));
    assert_eq!((private.code, private.stderr.as_str()), (0, ""));
    for mode in [0o644, 0o640, 0o604, 0o620] {
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = cli(&public_args("encode", &key, &["5"]));
        assert_eq!((out.code, &out.stdout), (0, &private.stdout), "{mode:o}");
        assert_eq!(
            out.stderr,
            format!(
                "shardid: warning: --key-file {key:?} may be read or written by others (mode {mode:04o}): \
                 chmod 600 it; whoever reads the key turns public IDs back into IDs\n"
            )
        );
    }
    for d in [dir, dir2, dir3] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn uuid_turns_ids_into_uuidv7s_and_back() {
    let id = Layout::TWITTER.compose(1_700_000_000_000, 5, 7).unwrap();
    let made = shardid::uuid::to_uuid_text(&Layout::TWITTER, id)
        .unwrap()
        .to_string();
    let out = cli(&["uuid", "--layout", "twitter", &id.to_string(), "x"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, format!("{made}\n"));
    assert_has(&out.stderr, "shardid: x: not a decimal integer");
    // Back: a preset's UUID names its layout; any case.
    let out = cli(&["uuid", "--from", &made.to_uppercase()]);
    assert_eq!((out.code, out.stdout), (0, format!("{id}\n")));
    let out = cli(&["uuid", "--from", "--json", "--layout", "twitter", &made]);
    assert_eq!(
        out.stdout,
        format!("{{\"id\":\"{id}\",\"uuid\":\"{made}\"}}\n")
    );
    // Another layout asked, a UUID of PostgreSQL's own uuidv7(), text that is none: refused.
    let out = cli(&[
        "uuid",
        "--from",
        "--layout",
        "discord",
        &made,
        "019ae0c1-2c3a-7b5e-9f21-3c4d5e6f7a8b",
        "nope",
    ]);
    assert_eq!((out.code, out.stdout.as_str()), (1, ""));
    assert_eq!(out.stderr.lines().count(), 3, "{}", out.stderr);
    assert_has(&out.stderr, shardid::uuid::OTHER_LAYOUT);
    assert_has(&out.stderr, shardid::uuid::NO_MARKER);
    assert_has(&out.stderr, shardid::uuid::NOT_TEXT);
    // A custom layout's UUID needs the layout; standard input when no value is given.
    let custom = ["--epoch-ms", "1600000000000", "--bits", "41,10,12"];
    assert!(wants_stdin(&["uuid", "--from"]));
    assert!(!wants_stdin(&["uuid", "5"]));
    let made = run(&[&["uuid"][..], &custom].concat(), Some("5\n6")).stdout;
    assert_eq!(made.lines().count(), 2, "{made}");
    let out = run(&["uuid", "--from"], Some(&made));
    assert_has(&out.stderr, shardid::uuid::CUSTOM_NEEDS_LAYOUT);
    let out = run(&[&["uuid", "--from"][..], &custom].concat(), Some(&made));
    assert_eq!((out.code, out.stdout.as_str()), (0, "5\n6\n"));
    assert_eq!(cli(&["uuid", "--shard", "1", "5"]).code, 2);
}
