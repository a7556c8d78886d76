//! `strobe-cases`: runs declarative runtime test cases against a strobe binary (see
//! `strobe_testkit::cases_cli`). The VM harness copies it into each guest.

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = strobe_testkit::cases_cli::run(
        std::env::args_os(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    ExitCode::from(code)
}
