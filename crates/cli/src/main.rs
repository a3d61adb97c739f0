//! The `linkshare` binary; everything is in the `linkshare_cli` library.

fn main() -> std::process::ExitCode {
    linkshare_cli::main_with_args(std::env::args_os())
}
