//! `strobe-plan`: the `strobe` command line with the canned plans ([`strobe_testkit::canned`])
//! behind its hidden `--x-plan NAME`, so tests can run hand-built scripts through the product's
//! own CLI and exit paths (signals, exit(), panics, half-done attaches).

fn main() {
    strobe::cli::trace_run::set_plans(strobe_testkit::canned::by_name);
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    std::process::exit(strobe::cli::run(args));
}
