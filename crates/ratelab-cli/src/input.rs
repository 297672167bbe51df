//! What the user hands the commands beyond their flags' own checks: the limit, and a replayed
//! traffic file read through the core's importer a chunk at a time.

use crate::text::{self, quote};
use ratelab::import::{ImportOptions, Imported, Importer};
use ratelab::spec::{parse_count, Replay};
use ratelab::Error;
use std::io::Read;
use std::sync::Arc;

/// `--limit`, as simulate, probe and demo take it.
pub(crate) fn limit(text: &str) -> Result<u64, String> {
    parse_count("--limit", text, 1, 1_000_000).map_err(|e| text::core(&e))
}

/// How much of a replay file is read at a time.
const REPLAY_CHUNK: usize = 1 << 20;

/// Reads a replay file through the core's importer, a chunk at a time, so only the times are
/// ever held. Malformed lines are skipped with a warning; a file that cannot be imported at
/// all is an error.
pub(crate) fn read_replay(replay: &Replay) -> Result<Arc<[u64]>, String> {
    let path = &replay.file;
    let cannot_read = |e: std::io::Error| format!("cannot read replay file {}: {e}", quote(path));
    let refused = |e: Error| format!("replay file {}: {}", quote(path), text::core(&e));
    let mut file = std::fs::File::open(path).map_err(cannot_read)?;
    let mut importer = Importer::new(ImportOptions {
        format: replay.format,
        filter: replay.filter.clone(),
    });
    let mut chunk = vec![0u8; REPLAY_CHUNK];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(cannot_read(e)),
        };
        importer.feed(&chunk[..n]).map_err(refused)?;
    }
    let imported = importer.finish().map_err(refused)?;
    if imported.counts.malformed > 0 {
        text::note(malformed_warning(path, &imported).trim_end());
    }
    Ok(Arc::from(imported.times))
}

/// The warning for skipped lines: how many, and the first ones with their numbers.
fn malformed_warning(path: &str, imported: &Imported) -> String {
    let mut out = format!(
        "ratelab: warning: replay file {} ({}): skipped {} malformed line(s) of {}:\n",
        quote(path),
        imported.format.name(),
        imported.counts.malformed,
        imported.counts.lines
    );
    for bad in &imported.counts.first_malformed {
        out += &format!(
            "  line {}: {}: {}\n",
            bad.line,
            quote(&bad.text),
            bad.reason
        );
    }
    let more = imported.counts.malformed - imported.counts.first_malformed.len() as u64;
    if more > 0 {
        out += &format!("  and {more} more\n");
    }
    out
}

/// A file's name as a message shows it (`-`: standard input).
pub(crate) fn shown_name(file: &str) -> String {
    if file == "-" {
        "standard input".into()
    } else {
        quote(file)
    }
}

/// The UTF-8 text of `file` (or standard input for `-`), at most `most` bytes; a larger one
/// is refused saying `expected` (what the command reads).
pub(crate) fn read_text(file: &str, most: u64, expected: &str) -> Result<String, String> {
    let name = shown_name(file);
    let mut bytes = Vec::new();
    let cannot = |e: std::io::Error| format!("cannot read {name}: {e}");
    if file == "-" {
        std::io::stdin()
            .take(most + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
    } else {
        std::fs::File::open(file)
            .map_err(cannot)?
            .take(most + 1)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
    }
    if bytes.len() as u64 > most {
        let size = if most >= 1 << 30 {
            format!("{} GiB", most >> 30)
        } else {
            format!("{} MiB", most >> 20)
        };
        return Err(format!("{name} is over {size}: {expected}"));
    }
    String::from_utf8(bytes).map_err(|_| format!("{name} is not UTF-8 text"))
}
