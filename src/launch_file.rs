//! Launch files for user kernels: `warpforge run --ptx K.ptx --launch K.toml`.
//!
//! ```toml
//! kernel = "vecadd"          # .entry name
//! grid = [4, 1, 1]           # or a single integer
//! block = 256                # or [x, y, z]
//! shared_bytes = 0           # dynamic shared memory (optional)
//!
//! [[param]]                  # one table per .param, in declaration order
//! kind = "buffer"            # a new device buffer; the parameter is its address
//! name = "a"                 # optional: other parameters may point into it
//! bytes = 4096
//! init = "random"            # zeros (default) | random | file
//! seed = 1                   # for random
//! output = "c.bin"           # optional: final contents are written here
//!
//! [[param]]
//! kind = "pointer"           # the address of a named buffer, plus `offset` bytes
//! buffer = "a"
//! offset = 16                # 0 (default) up to the buffer's size
//!
//! [[param]]
//! kind = "scalar"
//! type = "u32"               # u8 s8 u16 s16 u32 s32 u64 s64 f32 f64 bool
//! value = 1024
//!
//! [[param]]                  # a by-value struct (`.param .align 8 .b8 s[16]`): its bytes ...
//! kind = "struct"
//! bytes = [1, 0, 0, 0, 0, 0, 128, 63, 0, 0, 0, 0, 0, 0, 0, 0]
//!
//! [[param]]                  # ... or typed fields, each at the next offset aligned to its
//! kind = "struct"            # size (C layout) or at `at`; bytes no field covers are 0
//! field = [
//!   { type = "u32", value = 1 },
//!   { type = "f32", value = 1.0 },
//!   { type = "ptr", buffer = "a", offset = 8 },   # a device pointer field
//! ]
//!
//! [[buffer]]                 # a buffer no parameter allocates (e.g. only a struct points to it)
//! name = "table"
//! bytes = 256
//! ```
//! Relative file names are taken relative to the launch file's folder. Buffers are
//! allocated in order, the `[[buffer]]` tables first, after every key of the file has been
//! checked against the kernel. Mistakes are reported as `file:line:column: param N `key`: ...`.

use anyhow::{anyhow, Context, Result};
use serde::Deserialize;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use toml::Spanned;
use warpforge_model::gpu::launch::{check_arg, check_shape, LaunchShape};
use warpforge_model::gpu::Gpu;
use warpforge_model::hooks::GpuHooks;
use warpforge_model::host::{DevPtr, Dim3, Host, KernelArg, ModuleId};
use warpforge_model::ptx::ir::Symbol;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchFile {
    pub kernel: Spanned<String>,
    pub grid: Spanned<Dims>,
    pub block: Spanned<Dims>,
    #[serde(default)]
    pub shared_bytes: Option<Spanned<u32>>,
    #[serde(default, rename = "buffer")]
    pub buffers: Vec<BufferTable>,
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
    fn to_dim3(&self) -> Result<Dim3, String> {
        Ok(match self {
            Dims::One(x) => Dim3::x(*x),
            Dims::Many(v) => match v.as_slice() {
                [x] => Dim3::x(*x),
                [x, y] => Dim3::xy(*x, *y),
                [x, y, z] => Dim3::new(*x, *y, *z),
                _ => return Err(format!("must have 1 to 3 dimensions, got {}", v.len())),
            },
        })
    }
}

/// One `[[param]]` table. Which keys apply depends on `kind` (checked in [`plan_param`]).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    kind: Spanned<String>,
    #[serde(rename = "type")]
    ty: Option<Spanned<String>>,
    value: Option<Spanned<toml::Value>>,
    name: Option<Spanned<String>>,
    bytes: Option<Spanned<toml::Value>>,
    init: Option<Spanned<String>>,
    seed: Option<Spanned<u64>>,
    file: Option<Spanned<PathBuf>>,
    output: Option<Spanned<PathBuf>>,
    buffer: Option<Spanned<String>>,
    offset: Option<Spanned<i64>>,
    field: Option<Vec<Field>>,
}

/// One `[[buffer]]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferTable {
    name: Spanned<String>,
    bytes: Spanned<toml::Value>,
    init: Option<Spanned<String>>,
    seed: Option<Spanned<u64>>,
    file: Option<Spanned<PathBuf>>,
    output: Option<Spanned<PathBuf>>,
}

/// One field of a `kind = "struct"` parameter.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    #[serde(rename = "type")]
    ty: Spanned<String>,
    value: Option<Spanned<toml::Value>>,
    buffer: Option<Spanned<String>>,
    offset: Option<Spanned<i64>>,
    at: Option<Spanned<u64>>,
}

/// A parsed launch file with its text (for line numbers).
pub struct PreparedLaunch {
    pub file: LaunchFile,
    pub dir: PathBuf,
    path: String,
    text: String,
}

/// A device buffer whose final contents must be written to a file after the run.
pub struct Output {
    pub ptr: DevPtr,
    pub bytes: u64,
    pub path: PathBuf,
}

/// Everything a launch needs, buffers allocated and filled.
pub struct Materialised {
    pub shape: LaunchShape,
    /// The param buffer, laid out as the kernel's `.param` list.
    pub params: Vec<u8>,
    pub outputs: Vec<Output>,
}

pub fn load(path: &Path) -> Result<PreparedLaunch> {
    let text = crate::input_file::read_text_bounded(
        path,
        crate::input_file::MAX_LAUNCH_FILE_BYTES,
        "the limit for a launch file",
    )?;
    let file: LaunchFile = toml::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(PreparedLaunch {
        file,
        dir,
        path: path.display().to_string(),
        text,
    })
}

/// How a buffer starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Init {
    Zeros,
    Random,
    File,
}

/// A buffer to allocate.
struct BufPlan {
    /// `file:line:column: param N `bytes`` of its size, for allocation errors.
    whence: String,
    bytes: u64,
    init: Init,
    seed: u64,
    file: Option<PathBuf>,
    output: Option<PathBuf>,
}

/// A pointer to patch into the param buffer once buffers exist: at `at`, buffer `buf`
/// plus `offset`.
struct PtrPatch {
    at: usize,
    buf: usize,
    offset: u64,
}

/// The keys each kind of parameter takes.
const KEYS: &[(&str, &[&str])] = &[
    ("scalar", &["type", "value"]),
    (
        "buffer",
        &["name", "bytes", "init", "seed", "file", "output"],
    ),
    ("pointer", &["buffer", "offset"]),
    ("struct", &["bytes", "field"]),
];

impl PreparedLaunch {
    /// `file:line:column` of a value.
    fn at<T>(&self, s: &Spanned<T>) -> String {
        let start = s.span().start.min(self.text.len());
        let before = &self.text[..start];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        format!("{}:{line}:{col}", self.path)
    }

    /// An error at a value of parameter `i` (or of the file, `i` = None) under `key`.
    fn err<T>(
        &self,
        s: &Spanned<T>,
        i: Option<usize>,
        key: &str,
        msg: impl std::fmt::Display,
    ) -> anyhow::Error {
        match i {
            Some(i) => anyhow!("{}: param {i} `{key}`: {msg}", self.at(s)),
            None => anyhow!("{}: `{key}`: {msg}", self.at(s)),
        }
    }

    pub fn kernel(&self) -> &str {
        self.file.kernel.get_ref()
    }

    /// Check the whole file against kernel `kernel` of `module`, then allocate and fill the
    /// buffers and lay out the param buffer.
    pub fn materialise<H: GpuHooks>(
        &self,
        gpu: &mut Gpu<H>,
        module: ModuleId,
    ) -> Result<Materialised> {
        let f = &self.file;
        let m = gpu
            .module(module)
            .ok_or_else(|| anyhow!("unknown module handle"))?;
        let kernel = m.kernel(f.kernel.get_ref()).ok_or_else(|| {
            let names: Vec<&str> = m.kernels.iter().map(|k| k.name.as_str()).collect();
            self.err(
                &f.kernel,
                None,
                "kernel",
                format!(
                    "no kernel `{}` in {} (kernels: {})",
                    f.kernel.get_ref(),
                    m.file,
                    names.join(", ")
                ),
            )
        })?;
        // The shape and the kernel's memory, before anything is allocated.
        let grid = f
            .grid
            .get_ref()
            .to_dim3()
            .map_err(|e| self.err(&f.grid, None, "grid", e))?;
        let block = f
            .block
            .get_ref()
            .to_dim3()
            .map_err(|e| self.err(&f.block, None, "block", e))?;
        let shape = LaunchShape {
            grid,
            block,
            dynamic_shared: f.shared_bytes.as_ref().map_or(0, |s| *s.get_ref()),
        };
        if let Err(e) = check_shape(kernel, shape) {
            let msg = e.to_string();
            let msg = msg.trim_start_matches("launch error: ");
            return Err(if msg.contains(": grid.") {
                self.err(&f.grid, None, "grid", msg)
            } else if msg.contains(": block.") || msg.contains("a block of") {
                self.err(&f.block, None, "block", msg)
            } else if let (Some(s), true) = (&f.shared_bytes, msg.contains("shared memory")) {
                self.err(s, None, "shared_bytes", msg)
            } else {
                self.err(&f.kernel, None, "kernel", msg)
            });
        }
        // Every buffer, with its name.
        let mut bufs: Vec<BufPlan> = Vec::new();
        let mut names: HashMap<String, usize> = HashMap::new();
        let mut name_buf = |name: &Spanned<String>, i: Option<usize>, idx: usize| -> Result<()> {
            if names.insert(name.get_ref().clone(), idx).is_some() {
                return Err(self.err(
                    name,
                    i,
                    "name",
                    format!("a buffer named `{}` is declared already", name.get_ref()),
                ));
            }
            Ok(())
        };
        for b in &f.buffers {
            let plan = self.buffer_plan(None, &b.bytes, &b.init, &b.seed, &b.file, &b.output)?;
            name_buf(&b.name, None, bufs.len())?;
            bufs.push(plan);
        }
        // Buffer parameters get theirs in the first pass (pointers may name later ones).
        let mut param_buf: Vec<Option<usize>> = vec![None; f.params.len()];
        for (i, p) in f.params.iter().enumerate() {
            self.check_keys(i, p)?;
            if p.kind.get_ref() == "buffer" {
                let bytes = p.bytes.as_ref().ok_or_else(|| {
                    self.err(&p.kind, Some(i), "bytes", "a buffer needs `bytes = N`")
                })?;
                let plan =
                    self.buffer_plan(Some(i), bytes, &p.init, &p.seed, &p.file, &p.output)?;
                if let Some(n) = &p.name {
                    name_buf(n, Some(i), bufs.len())?;
                }
                param_buf[i] = Some(bufs.len());
                bufs.push(plan);
            }
        }
        // Each parameter's bytes (pointers patched in once the buffers exist).
        let mut values: Vec<(Vec<u8>, Vec<PtrPatch>)> = Vec::new();
        for (i, p) in f.params.iter().enumerate() {
            values.push(self.plan_param(i, p, param_buf[i], &names, &bufs)?);
        }
        let syms: Vec<&Symbol> = kernel
            .params
            .iter()
            .map(|&s| &m.symbols[s as usize])
            .collect();
        if syms.len() != f.params.len() {
            let list: Vec<&str> = syms.iter().map(|s| s.name.as_str()).collect();
            return Err(self.err(
                &f.kernel,
                None,
                "kernel",
                format!(
                    "kernel `{}` expects {} parameter(s) but {} were given ([[param]] tables; its \
                     parameters: {})",
                    kernel.name,
                    syms.len(),
                    f.params.len(),
                    list.join(", ")
                ),
            ));
        }
        let mut params = vec![0u8; kernel.param_bytes as usize];
        let mut patches = Vec::new();
        for (i, ((p, (bytes, ptrs)), sym)) in f.params.iter().zip(values).zip(&syms).enumerate() {
            self.check_against(i, p, &bytes, sym)?;
            let off = sym.offset as usize;
            params
                .get_mut(off..off + bytes.len())
                .ok_or_else(|| self.err(&p.kind, Some(i), "kind", "does not fit the param buffer"))?
                .copy_from_slice(&bytes);
            patches.extend(ptrs.into_iter().map(|q| PtrPatch {
                at: q.at + off,
                ..q
            }));
        }
        // Everything is checked: allocate and fill the buffers.
        let mut ptrs = Vec::with_capacity(bufs.len());
        let mut outputs = Vec::new();
        for b in &bufs {
            let ptr = gpu
                .alloc(b.bytes)
                .map_err(|e| anyhow!("{}: {e}", b.whence))?;
            match b.init {
                Init::Zeros => {}
                Init::Random => write_seeded(gpu, ptr, b.seed, b.bytes)?,
                Init::File => {
                    let path = self.dir.join(b.file.as_ref().expect("checked"));
                    let data = crate::input_file::read_bounded(
                        &path,
                        b.bytes,
                        "the size of the buffer it fills",
                    )?;
                    gpu.write_bytes(ptr, &data)?;
                }
            }
            if let Some(o) = &b.output {
                outputs.push(Output {
                    ptr,
                    bytes: b.bytes,
                    path: self.dir.join(o),
                });
            }
            ptrs.push(ptr);
        }
        for q in patches {
            let v = ptrs[q.buf].0 + q.offset;
            params[q.at..q.at + 8].copy_from_slice(&v.to_le_bytes());
        }
        Ok(Materialised {
            shape,
            params,
            outputs,
        })
    }

    /// Every key of parameter `i` must apply to its kind.
    fn check_keys(&self, i: usize, p: &Param) -> Result<()> {
        let kind = p.kind.get_ref().as_str();
        let Some((_, keys)) = KEYS.iter().find(|(k, _)| *k == kind) else {
            let kinds: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
            return Err(self.err(
                &p.kind,
                Some(i),
                "kind",
                format!("unknown kind `{kind}` (use {})", kinds.join(", ")),
            ));
        };
        let given: [(&str, Option<std::ops::Range<usize>>); 11] = [
            ("type", p.ty.as_ref().map(|s| s.span())),
            ("value", p.value.as_ref().map(|s| s.span())),
            ("name", p.name.as_ref().map(|s| s.span())),
            ("bytes", p.bytes.as_ref().map(|s| s.span())),
            ("init", p.init.as_ref().map(|s| s.span())),
            ("seed", p.seed.as_ref().map(|s| s.span())),
            ("file", p.file.as_ref().map(|s| s.span())),
            ("output", p.output.as_ref().map(|s| s.span())),
            ("buffer", p.buffer.as_ref().map(|s| s.span())),
            ("offset", p.offset.as_ref().map(|s| s.span())),
            (
                "field",
                p.field
                    .as_ref()
                    .and_then(|f| f.first())
                    .map(|f| f.ty.span()),
            ),
        ];
        for (key, span) in given {
            if let Some(span) = span {
                if !keys.contains(&key) {
                    let at = Spanned::new(span, ());
                    return Err(self.err(
                        &at,
                        Some(i),
                        key,
                        format!(
                            "does not apply to kind = \"{kind}\" (it takes {})",
                            keys.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// A buffer's plan from its keys.
    fn buffer_plan(
        &self,
        i: Option<usize>,
        bytes: &Spanned<toml::Value>,
        init: &Option<Spanned<String>>,
        seed: &Option<Spanned<u64>>,
        file: &Option<Spanned<PathBuf>>,
        output: &Option<Spanned<PathBuf>>,
    ) -> Result<BufPlan> {
        let n = bytes
            .get_ref()
            .as_integer()
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| {
                self.err(
                    bytes,
                    i,
                    "bytes",
                    format!("needs a byte count, got {}", bytes.get_ref()),
                )
            })?;
        let init_kind = match init.as_ref().map(|s| s.get_ref().as_str()) {
            None | Some("zeros") => Init::Zeros,
            Some("random") => Init::Random,
            Some("file") => Init::File,
            Some(other) => {
                return Err(self.err(
                    init.as_ref().expect("some"),
                    i,
                    "init",
                    format!("unknown init `{other}` (use zeros, random or file)"),
                ))
            }
        };
        match (init_kind, file) {
            (Init::File, None) => {
                let at = init.as_ref().expect("init = file");
                return Err(self.err(at, i, "init", "init = \"file\" needs `file = \"...\"`"));
            }
            (Init::File, Some(f)) => {
                // Checked before anything is read or allocated: there, and no larger than
                // the buffer (a FIFO or device has no size: its read stops at the limit).
                let path = self.dir.join(f.get_ref());
                let meta = std::fs::metadata(&path).map_err(|e| {
                    self.err(f, i, "file", format!("cannot read {}: {e}", path.display()))
                })?;
                if meta.is_file() && meta.len() > n {
                    return Err(self.err(
                        f,
                        i,
                        "file",
                        format!(
                            "{} holds {} bytes, more than the {n} bytes of the buffer it fills",
                            path.display(),
                            meta.len()
                        ),
                    ));
                }
            }
            (_, Some(f)) => {
                return Err(self.err(f, i, "file", "`file` is given but init is not \"file\""))
            }
            _ => {}
        }
        Ok(BufPlan {
            whence: match i {
                Some(i) => format!("{}: param {i} `bytes`", self.at(bytes)),
                None => format!("{}: `bytes`", self.at(bytes)),
            },
            bytes: n,
            init: init_kind,
            seed: seed.as_ref().map_or(0, |s| *s.get_ref()),
            file: file.as_ref().map(|f| f.get_ref().clone()),
            output: output.as_ref().map(|o| o.get_ref().clone()),
        })
    }

    /// A pointer to `buffer` + `offset` (checked against the buffer's size).
    fn pointer(
        &self,
        i: usize,
        buffer: &Spanned<String>,
        offset: &Option<Spanned<i64>>,
        names: &HashMap<String, usize>,
        bufs: &[BufPlan],
        at: usize,
    ) -> Result<PtrPatch> {
        let &b = names.get(buffer.get_ref().as_str()).ok_or_else(|| {
            let mut known: Vec<&String> = names.keys().collect();
            known.sort();
            self.err(
                buffer,
                Some(i),
                "buffer",
                format!(
                    "no buffer named `{}` (named buffers: {})",
                    buffer.get_ref(),
                    if known.is_empty() {
                        "none; give one `name = \"...\"`".to_string()
                    } else {
                        known
                            .iter()
                            .map(|s| format!("`{s}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            )
        })?;
        let off = match offset {
            None => 0,
            Some(o) => {
                let v = *o.get_ref();
                let size = bufs[b].bytes;
                if v < 0 || v as u64 > size {
                    return Err(self.err(
                        o,
                        Some(i),
                        "offset",
                        format!(
                            "{v} is outside buffer `{}` (0 to its {size} bytes)",
                            buffer.get_ref()
                        ),
                    ));
                }
                v as u64
            }
        };
        Ok(PtrPatch {
            at,
            buf: b,
            offset: off,
        })
    }

    /// The bytes of parameter `i` (pointers as patches), from its own keys.
    fn plan_param(
        &self,
        i: usize,
        p: &Param,
        buf: Option<usize>,
        names: &HashMap<String, usize>,
        bufs: &[BufPlan],
    ) -> Result<(Vec<u8>, Vec<PtrPatch>)> {
        let need = |key: &str| {
            self.err(
                &p.kind,
                Some(i),
                key,
                format!("kind = \"{}\" needs `{key}`", p.kind.get_ref()),
            )
        };
        match p.kind.get_ref().as_str() {
            "scalar" => {
                let ty = p.ty.as_ref().ok_or_else(|| need("type"))?;
                let v = p.value.as_ref().ok_or_else(|| need("value"))?;
                let arg = self.scalar(i, ty, v)?;
                Ok((arg.to_bytes(), vec![]))
            }
            "buffer" => {
                let b = buf.expect("buffer parameters have a buffer");
                Ok((
                    vec![0; 8],
                    vec![PtrPatch {
                        at: 0,
                        buf: b,
                        offset: 0,
                    }],
                ))
            }
            "pointer" => {
                let b = p.buffer.as_ref().ok_or_else(|| need("buffer"))?;
                let patch = self.pointer(i, b, &p.offset, names, bufs, 0)?;
                Ok((vec![0; 8], vec![patch]))
            }
            _ => self.struct_image(i, p, names, bufs),
        }
    }

    /// A struct's bytes: `bytes = [...]`, or its fields laid out (size: the furthest field
    /// end; the `.param`'s size is checked in [`Self::check_against`]).
    fn struct_image(
        &self,
        i: usize,
        p: &Param,
        names: &HashMap<String, usize>,
        bufs: &[BufPlan],
    ) -> Result<(Vec<u8>, Vec<PtrPatch>)> {
        match (&p.bytes, &p.field) {
            (Some(b), None) => {
                let list = b.get_ref().as_array().ok_or_else(|| {
                    self.err(
                        b,
                        Some(i),
                        "bytes",
                        "a struct's `bytes` is a list of byte values, e.g. [1, 0, 0, 0]",
                    )
                })?;
                let mut out = Vec::with_capacity(list.len());
                for (k, v) in list.iter().enumerate() {
                    let x = v
                        .as_integer()
                        .and_then(|x| u8::try_from(x).ok())
                        .ok_or_else(|| {
                            self.err(
                                b,
                                Some(i),
                                "bytes",
                                format!("element {k} ({v}) is not a byte (0 to 255)"),
                            )
                        })?;
                    out.push(x);
                }
                Ok((out, vec![]))
            }
            (None, Some(fields)) => {
                let mut out: Vec<u8> = Vec::new();
                let mut patches = Vec::new();
                let mut next = 0u64;
                for (k, fl) in fields.iter().enumerate() {
                    let key = format!("field[{k}]");
                    let ty = fl.ty.get_ref().as_str();
                    let (bytes, size, patch) = if ty == "ptr" {
                        if fl.value.is_some() {
                            return Err(self.err(
                                &fl.ty,
                                Some(i),
                                &key,
                                "a `ptr` field takes `buffer` (and `offset`), not `value`",
                            ));
                        }
                        let b = fl.buffer.as_ref().ok_or_else(|| {
                            self.err(
                                &fl.ty,
                                Some(i),
                                &key,
                                "a `ptr` field needs `buffer = \"name\"`",
                            )
                        })?;
                        let q = self.pointer(i, b, &fl.offset, names, bufs, 0)?;
                        (vec![0u8; 8], 8u64, Some(q))
                    } else {
                        if fl.buffer.is_some() || fl.offset.is_some() {
                            return Err(self.err(
                                &fl.ty,
                                Some(i),
                                &key,
                                "`buffer` and `offset` apply to `ptr` fields only",
                            ));
                        }
                        let v = fl.value.as_ref().ok_or_else(|| {
                            self.err(
                                &fl.ty,
                                Some(i),
                                &key,
                                format!("a `{ty}` field needs `value`"),
                            )
                        })?;
                        let arg = self.scalar(i, &fl.ty, v)?;
                        (arg.to_bytes(), arg.size_bytes() as u64, None)
                    };
                    let at = match &fl.at {
                        Some(a) => *a.get_ref(),
                        None => next.next_multiple_of(size),
                    };
                    let end = at
                        .checked_add(size)
                        .filter(|&e| e <= warpforge_model::gpu::launch::MAX_PARAM_BYTES)
                        .ok_or_else(|| {
                            let s = fl
                                .at
                                .as_ref()
                                .map_or(fl.ty.as_ref_unit(), |a| a.as_ref_unit());
                            self.err(
                                &s,
                                Some(i),
                                &key,
                                format!("at {at} lies past any parameter"),
                            )
                        })?;
                    if out.len() < end as usize {
                        out.resize(end as usize, 0);
                    }
                    out[at as usize..end as usize].copy_from_slice(&bytes);
                    if let Some(q) = patch {
                        patches.push(PtrPatch {
                            at: at as usize,
                            ..q
                        });
                    }
                    next = end;
                }
                Ok((out, patches))
            }
            (Some(b), Some(_)) => Err(self.err(
                b,
                Some(i),
                "bytes",
                "give a struct's `bytes` or its `field`s, not both",
            )),
            (None, None) => Err(self.err(
                &p.kind,
                Some(i),
                "kind",
                "kind = \"struct\" needs `bytes = [...]` or `field = [...]`",
            )),
        }
    }

    /// Parameter `i`'s bytes against the kernel's `.param`: a scalar's type, a pointer's
    /// 64 bits, a struct's size.
    fn check_against(&self, i: usize, p: &Param, bytes: &[u8], sym: &Symbol) -> Result<()> {
        let arg = match p.kind.get_ref().as_str() {
            "scalar" => {
                let (ty, v) = (
                    p.ty.as_ref().expect("checked"),
                    p.value.as_ref().expect("checked"),
                );
                let arg = self.scalar(i, ty, v)?;
                check_arg(&arg, sym)
                    .map_err(|m| self.err(ty, Some(i), "type", format!("parameter {i} {m}")))?;
                return Ok(());
            }
            "buffer" | "pointer" => KernelArg::Ptr(DevPtr(0)),
            _ => {
                if bytes.len() as u64 != sym.size {
                    let (s, key) = match &p.bytes {
                        Some(b) => (b.as_ref_unit(), "bytes"),
                        None => (p.kind.as_ref_unit(), "field"),
                    };
                    return Err(self.err(
                        &s,
                        Some(i),
                        key,
                        format!(
                            "parameter {i} (`{}`) takes {} bytes but the struct has {}",
                            sym.name,
                            sym.size,
                            bytes.len()
                        ),
                    ));
                }
                return Ok(());
            }
        };
        check_arg(&arg, sym).map_err(|m| {
            self.err(
                &p.kind,
                Some(i),
                "kind",
                format!("parameter {i} {m} (a device pointer)"),
            )
        })
    }

    fn scalar(
        &self,
        i: usize,
        ty: &Spanned<String>,
        v: &Spanned<toml::Value>,
    ) -> Result<KernelArg> {
        scalar(ty.get_ref(), v.get_ref()).map_err(|e| {
            if e.starts_with("unknown scalar type") {
                self.err(ty, Some(i), "type", e)
            } else {
                self.err(v, Some(i), "value", e)
            }
        })
    }
}

/// A `Spanned` with the same span and no value (to point at a key in a message).
trait SpanOnly {
    fn as_ref_unit(&self) -> Spanned<()>;
}
impl<T> SpanOnly for Spanned<T> {
    fn as_ref_unit(&self) -> Spanned<()> {
        Spanned::new(self.span(), ())
    }
}

/// The kernel argument of a scalar `type` and `value`.
pub fn scalar(ty: &str, v: &toml::Value) -> Result<KernelArg, String> {
    let int = || -> Result<i64, String> {
        v.as_integer()
            .ok_or_else(|| format!("type {ty} needs an integer value, got {v}"))
    };
    let float = || -> Result<f64, String> {
        v.as_float()
            .or_else(|| v.as_integer().map(|i| i as f64))
            .ok_or_else(|| format!("type {ty} needs a number, got {v}"))
    };
    let range = |i: i64, lo: i64, hi: i64| -> Result<i64, String> {
        if i < lo || i > hi {
            return Err(format!("value {i} does not fit type {ty}"));
        }
        Ok(i)
    };
    Ok(match ty {
        // A C++ `bool` parameter is a .u8 / .b8 in the PTX clang emits.
        "bool" => KernelArg::U8(
            v.as_bool()
                .ok_or_else(|| format!("type bool needs true or false, got {v}"))?
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
        other => {
            return Err(format!(
                "unknown scalar type `{other}` (use u8, s8, u16, s16, u32, s32, u64, s64, f32, \
                 f64 or bool; ptr in a struct field)"
            ))
        }
    })
}

/// Fill `bytes` bytes at `ptr` with the seeded pattern, a MiB at a time.
fn write_seeded(host: &mut dyn Host, ptr: DevPtr, seed: u64, bytes: u64) -> Result<()> {
    let mut g = Seeded(seed);
    let mut done = 0u64;
    let mut chunk = Vec::new();
    while done < bytes {
        let n = (bytes - done).min(1 << 20) as usize;
        g.fill(&mut chunk, n);
        host.write_bytes(ptr.offset(done), &chunk)?;
        done += n as u64;
    }
    Ok(())
}

/// Deterministic pseudo-random bytes (SplitMix64), so a seed always gives the same buffer.
struct Seeded(u64);

impl Seeded {
    /// The next `n` bytes (`n` a multiple of 8 except at the end, so that chunks of a
    /// buffer continue one stream).
    fn fill(&mut self, out: &mut Vec<u8>, n: usize) {
        out.clear();
        while out.len() < n {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
        }
        out.truncate(n);
    }
}

/// Write a buffer's final contents to its output file, a MiB at a time.
pub fn write_output(host: &mut dyn Host, o: &Output) -> Result<()> {
    let file = std::fs::File::create(&o.path)
        .with_context(|| format!("cannot write {}", o.path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    let mut buf = Vec::new();
    let mut done = 0u64;
    while done < o.bytes {
        let n = (o.bytes - done).min(1 << 20) as usize;
        buf.resize(n, 0);
        host.read_bytes(o.ptr.offset(done), &mut buf)?;
        w.write_all(&buf)
            .with_context(|| format!("cannot write {}", o.path.display()))?;
        done += n as u64;
    }
    w.flush()
        .with_context(|| format!("cannot write {}", o.path.display()))
}
