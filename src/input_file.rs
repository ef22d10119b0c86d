//! Reading the user's input files with a stated size limit, checked while reading (a FIFO
//! or /dev/zero has no size to check beforehand), so no input makes the process allocate
//! without bound.

use anyhow::{bail, Context, Result};
use std::io::Read;
use std::path::Path;

/// PTX modules (the largest of Rodinia's is under 1 MiB).
pub const MAX_PTX_BYTES: u64 = 64 << 20;
/// Launch files (TOML).
pub const MAX_LAUNCH_FILE_BYTES: u64 = 1 << 20;

/// The bytes of `path`, or an error naming it when it holds more than `max` bytes (`limit`
/// says what the limit is, e.g. "the limit for a PTX module").
pub fn read_bounded(path: &Path, max: u64, limit: &str) -> Result<Vec<u8>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut data = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut data)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if data.len() as u64 > max {
        bail!("{} holds more than {max} bytes, {limit}", path.display());
    }
    Ok(data)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_text_bounded(path: &Path, max: u64, limit: &str) -> Result<String> {
    String::from_utf8(read_bounded(path, max, limit)?)
        .map_err(|e| anyhow::anyhow!("{}: not UTF-8 text ({e})", path.display()))
}
