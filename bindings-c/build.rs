//! Gives libshardid.so a SONAME, so programs linked against it keep loading the compatible
//! version after an upgrade: `libshardid.so.MAJOR`, or `libshardid.so.0.MINOR` before 1.0
//! (where a minor version may break the ABI).
fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" {
        let major = env!("CARGO_PKG_VERSION_MAJOR");
        let minor = env!("CARGO_PKG_VERSION_MINOR");
        let soname = if major == "0" {
            format!("libshardid.so.0.{minor}")
        } else {
            format!("libshardid.so.{major}")
        };
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
}
