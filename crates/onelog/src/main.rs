//! The `onelog` command: `onelog serve`, `onelog binlog` (`binlog_cmd`), `onelog backup`,
//! `onelog restore`, `onelog check` (`backup`), `onelog --version`,
//! `onelog --help`.
//!
//! Thin on purpose: `cli.rs` parses, `serve.rs` runs the server. Exit status 0 on success
//! (including a clean shutdown), 1 on a usage or startup error.
//!
//! Invariants: `main` starts no thread before it hands over to the command, so `serve` can
//! block the termination signals before any other thread exists (see `signals.rs`).

mod backup;
mod binlog_cmd;
mod cli;
mod config;
mod datadir;
mod logging;
mod serve;
mod signals;

use cli::Command;

/// Every allocation of the process goes through mimalloc (why: crates/onelog/Cargo.toml).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("binlog") => std::process::exit(binlog_cmd::main(&args[1..])),
        Some("backup") => std::process::exit(backup::backup_main(&args[1..])),
        Some("restore") => std::process::exit(backup::restore_main(&args[1..])),
        Some("check") => std::process::exit(backup::check::main(&args[1..])),
        _ => {}
    }
    let code = match cli::parse_args(&args) {
        Ok(Command::Help) => {
            print!("{}", cli::help_text());
            0
        }
        Ok(Command::Version) => {
            println!("{}", cli::version_text());
            0
        }
        Ok(Command::Serve(opts)) => serve::run(&opts),
        Err(e) => {
            eprintln!("onelog: {e}");
            1
        }
    };
    std::process::exit(code);
}
