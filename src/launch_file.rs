//! Launch files for user kernels: `warpforge run --ptx K.ptx --launch K.toml`.
//!
//! ```toml
//! kernel = "vecadd"          # .entry name
//! grid = [4, 1, 1]           # or a single integer
//! block = 256                # or [x, y, z]
//! shared_bytes = 0           # dynamic shared memory (optional)
//!
//! [[param]]                  # one table per .param, in declaration order
//! kind = "buffer"
//! bytes = 4096
//! init = "random"            # zeros (default) | random | file
//! seed = 1                   # for random
//! output = "c.bin"           # optional: final contents are written here
//!
//! [[param]]
//! kind = "scalar"
//! type = "u32"               # u8 s8 u16 s16 u32 s32 u64 s64 f32 f64 bool
//! value = 1024
//! ```
//! Relative file names are taken relative to the launch file's folder.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use warpforge_model::host::{DevPtr, Dim3, Host, KernelArg};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchFile {
    pub kernel: String,
    pub grid: Dims,
    pub block: Dims,
    #[serde(default)]
    pub shared_bytes: u32,
    #[serde(default, rename = "param")]
    pub params: Vec<Param>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Dims {
    One(u32),
    Many(Vec<u32>),
}

impl Dims {
    fn to_dim3(&self, what: &str) -> Result<Dim3> {
        Ok(match self {
            Dims::One(x) => Dim3::x(*x),
            Dims::Many(v) => match v.as_slice() {
                [x] => Dim3::x(*x),
                [x, y] => Dim3::xy(*x, *y),
                [x, y, z] => Dim3::new(*x, *y, *z),
                _ => bail!("`{what}` must have 1 to 3 dimensions, got {}", v.len()),
            },
        })
    }
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Param {
    Scalar {
        #[serde(rename = "type")]
        ty: String,
        value: toml::Value,
    },
    Buffer {
        bytes: u64,
        #[serde(default)]
        init: BufferInit,
        #[serde(default)]
        seed: u64,
        file: Option<PathBuf>,
        output: Option<PathBuf>,
    },
}

#[derive(Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BufferInit {
    #[default]
    Zeros,
    Random,
    File,
}

/// A parsed launch ready to run.
pub struct PreparedLaunch {
    pub file: LaunchFile,
    pub dir: PathBuf,
}

/// A device buffer whose final contents must be written to a file after the run.
pub struct Output {
    pub ptr: DevPtr,
    pub bytes: u64,
    pub path: PathBuf,
}

pub fn load(path: &Path) -> Result<PreparedLaunch> {
    let text = crate::input_file::read_text_bounded(
        path,
        crate::input_file::MAX_LAUNCH_FILE_BYTES,
        "the limit for a launch file",
    )?;
    let file: LaunchFile =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(PreparedLaunch { file, dir })
}

impl PreparedLaunch {
    /// Allocate and fill the buffers and build the argument list.
    pub fn materialise(
        &self,
        host: &mut dyn Host,
        origin: &str,
    ) -> Result<(Vec<KernelArg>, Vec<Output>)> {
        let mut args = Vec::new();
        let mut outputs = Vec::new();
        for (i, p) in self.file.params.iter().enumerate() {
            let here = format!("{origin}: param {i}");
            match p {
                Param::Scalar { ty, value } => {
                    args.push(scalar(ty, value).with_context(|| here.clone())?)
                }
                Param::Buffer {
                    bytes,
                    init,
                    seed,
                    file,
                    output,
                } => {
                    let ptr = host.alloc(*bytes)?;
                    match init {
                        BufferInit::Zeros => {
                            if file.is_some() {
                                bail!("{here}: `file` is given but init is not \"file\"");
                            }
                        }
                        BufferInit::Random => {
                            let data = seeded_bytes(*seed, *bytes as usize);
                            host.write_bytes(ptr, &data)?;
                        }
                        BufferInit::File => {
                            let f = file.as_ref().ok_or_else(|| {
                                anyhow::anyhow!("{here}: init = \"file\" needs `file = \"...\"`")
                            })?;
                            let path = self.dir.join(f);
                            // Read no more than the buffer holds (+1 to see that it is more).
                            let data = crate::input_file::read_bounded(
                                &path,
                                *bytes,
                                "the size of the buffer it fills",
                            )
                            .with_context(|| here.clone())?;
                            host.write_bytes(ptr, &data)?;
                        }
                    }
                    if let Some(o) = output {
                        outputs.push(Output {
                            ptr,
                            bytes: *bytes,
                            path: self.dir.join(o),
                        });
                    }
                    args.push(KernelArg::Ptr(ptr));
                }
            }
        }
        Ok((args, outputs))
    }

    pub fn grid(&self) -> Result<Dim3> {
        self.file.grid.to_dim3("grid")
    }
    pub fn block(&self) -> Result<Dim3> {
        self.file.block.to_dim3("block")
    }
}

fn scalar(ty: &str, v: &toml::Value) -> Result<KernelArg> {
    let int = || -> Result<i64> {
        v.as_integer()
            .ok_or_else(|| anyhow::anyhow!("type {ty} needs an integer value, got {v}"))
    };
    let float = || -> Result<f64> {
        v.as_float()
            .or_else(|| v.as_integer().map(|i| i as f64))
            .ok_or_else(|| anyhow::anyhow!("type {ty} needs a number, got {v}"))
    };
    let range = |i: i64, lo: i64, hi: i64| -> Result<i64> {
        if i < lo || i > hi {
            bail!("value {i} does not fit type {ty}")
        }
        Ok(i)
    };
    Ok(match ty {
        // A C++ `bool` parameter is a .u8 / .b8 in the PTX clang emits.
        "bool" => KernelArg::U8(
            v.as_bool()
                .ok_or_else(|| anyhow::anyhow!("type bool needs true or false, got {v}"))?
                as u8,
        ),
        "u8" => KernelArg::U8(range(int()?, 0, u8::MAX as i64)? as u8),
        "s8" => KernelArg::S8(range(int()?, i8::MIN as i64, i8::MAX as i64)? as i8),
        "u16" => KernelArg::U16(range(int()?, 0, u16::MAX as i64)? as u16),
        "s16" => KernelArg::S16(range(int()?, i16::MIN as i64, i16::MAX as i64)? as i16),
        "u32" => KernelArg::U32(range(int()?, 0, u32::MAX as i64)? as u32),
        "s32" => KernelArg::S32(range(int()?, i32::MIN as i64, i32::MAX as i64)? as i32),
        "u64" => KernelArg::U64(range(int()?, 0, i64::MAX)? as u64),
        "s64" => KernelArg::S64(int()?),
        "f32" => KernelArg::F32(float()? as f32),
        "f64" => KernelArg::F64(float()?),
        other => bail!(
            "unknown scalar type `{other}` (use u8, s8, u16, s16, u32, s32, u64, s64, f32, f64 \
             or bool)"
        ),
    })
}

/// Deterministic pseudo-random bytes (SplitMix64), so a seed always gives the same buffer.
fn seeded_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut state = seed;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(n);
    out
}
