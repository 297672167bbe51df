//! `ratelab-docs OUT`: renders the book under `docs/` into the folder `OUT` (see the
//! library). `cargo xtask docs` and `cargo xtask build` run it into `dist/docs/`.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: ratelab-docs OUT (the folder to write the book into, e.g. dist/docs)");
        return ExitCode::from(2);
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    match ratelab_docs::render(&root, Path::new(&out)) {
        Ok(files) => {
            eprintln!("the book: {} files in {out}", files.len());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ratelab-docs: {e}");
            ExitCode::FAILURE
        }
    }
}
