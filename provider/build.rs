//! Generates Rust bindings to OpenSSL's provider-side core headers
//! (`core.h`, `core_dispatch.h`, `core_names.h`, `core_object.h`): the
//! dispatch-table types, function ids and parameter names. Headers come from
//! `$OPENSSL_INCLUDE_DIR` if set, else the system's include path. The 3.0
//! headers suffice: names that appeared later are defined in `ffi::names`.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-env-changed=OPENSSL_INCLUDE_DIR");

    let mut builder = bindgen::Builder::default()
        .header("wrapper.h")
        .allowlist_type("OSSL_.*")
        .allowlist_var("OSSL_.*")
        .allowlist_var("OPENSSL_.*")
        .derive_default(false)
        .layout_tests(false)
        .generate_comments(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    if let Ok(dir) = env::var("OPENSSL_INCLUDE_DIR") {
        builder = builder.clang_arg(format!("-I{dir}"));
    }
    let bindings = builder
        .generate()
        .expect("bindgen could not read the OpenSSL core headers (is libssl-dev installed?)");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    bindings
        .write_to_file(out.join("core_bindings.rs"))
        .expect("writing the bindings");
}
