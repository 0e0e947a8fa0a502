//! The `onelog` command: `onelog serve`, `onelog --version`, `onelog --help`.
//!
//! Thin on purpose: `cli.rs` parses, `serve.rs` runs the server. Exit status 0 on success
//! (including a clean shutdown), 1 on a usage or startup error.

mod cli;
mod config;
mod datadir;
mod logging;
mod serve;
mod signals;

use cli::Command;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
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
