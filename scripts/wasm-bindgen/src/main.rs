//! `wasm-bindgen --target T --out-dir D --out-name N input.wasm`, with every other option at
//! the wasm-bindgen CLI's default (its `rmain`, version 0.2.130), so the output is the CLI's.
use std::path::PathBuf;
use std::process::ExitCode;

use wasm_bindgen_cli_support::{Bindgen, EncodeInto};

fn usage() -> ExitCode {
    eprintln!("usage: shardid-wasm-bindgen --target web|bundler|nodejs --out-dir DIR --out-name NAME INPUT.wasm");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut target, mut out_dir, mut out_name, mut input) = (None, None, None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--version" => {
                println!("shardid-wasm-bindgen (wasm-bindgen-cli-support 0.2.130)");
                return ExitCode::SUCCESS;
            }
            "--target" => target = args.next(),
            "--out-dir" => out_dir = args.next().map(PathBuf::from),
            "--out-name" => out_name = args.next(),
            _ if !arg.starts_with('-') && input.is_none() => input = Some(PathBuf::from(arg)),
            _ => return usage(),
        }
    }
    let (Some(target), Some(out_dir), Some(input)) = (target, out_dir, input) else {
        return usage();
    };
    let mut b = Bindgen::new();
    let mode = match target.as_str() {
        "web" => b.web(true),
        "bundler" => b.bundler(true),
        "nodejs" => b.nodejs(true),
        _ => return usage(),
    };
    let result = mode.and_then(|b| {
        // The CLI's defaults, set as its rmain sets them (some differ from Bindgen::new's).
        #[allow(deprecated)]
        let b = b
            .input_path(&input)
            .debug(false)
            .demangle(true)
            .keep_lld_exports(false)
            .keep_debug(false)
            .split_debug_info(false)
            .remove_name_section(false)
            .remove_producers_section(false)
            .typescript(true)
            .omit_imports(false)
            .omit_default_module_path(false)
            .split_linked_modules(false)
            .js_string_builtins(false)
            .ts_typed_array_buffers(false)
            .reference_types(false)
            .reset_state_function(false)
            .force_enable_abort_handler(false);
        if let Some(name) = &out_name {
            b.out_name(name);
        }
        b.encode_into(EncodeInto::Test);
        b.generate(&out_dir)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:?}");
            ExitCode::FAILURE
        }
    }
}
