//! The `strobe` binary: everything lives in the library; this only maps the result to an exit
//! code.

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    std::process::exit(strobe::cli::run(args));
}
