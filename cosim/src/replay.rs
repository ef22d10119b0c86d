//! Replay files: everything needed to reproduce a divergence alone.
//!
//! Format (compact text, streamable): the first line is a JSON header (unit, parameters,
//! instance, the RTL source texts, the input ports, the failing cycle and port); then one
//! line per cycle from the first cycle after the harness's implicit reset up to and
//! including the failing cycle, each the hexadecimal values of every input port in port
//! order separated by spaces; then optionally a line `post` followed by up to 32 further
//! cycles that only the VCD windows use (the harness does not compare them).

use crate::build::{BuildOptions, RtlSource};
use crate::lockstep::{Cosim, Summary};
use crate::{CosimError, Stimulus};
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;
use warpforge_model::units::contract::{Bits, Params, UnitDesc};

pub const FORMAT: &str = "warpforge-replay-1";

/// Consecutive cycles' input ports, stored flat (one block of words per cycle), from cycle
/// [`InputLog::first`] on. Cycle numbers in the API are absolute.
#[derive(Debug, Clone)]
pub struct InputLog {
    first: u64,
    /// Input port indices in the unit's port list.
    pub(crate) inputs: Vec<usize>,
    pub(crate) widths: Vec<u32>,
    offsets: Vec<usize>,
    per_cycle: usize,
    data: Vec<u64>,
}

impl InputLog {
    pub fn new(desc: &UnitDesc, params: &Params) -> InputLog {
        let widths_all = desc.widths(params);
        let inputs: Vec<usize> = (0..desc.ports.len())
            .filter(|&i| desc.ports[i].role.is_input())
            .collect();
        let widths: Vec<u32> = inputs.iter().map(|&i| widths_all[i]).collect();
        let mut offsets = vec![];
        let mut per_cycle = 0;
        for w in &widths {
            offsets.push(per_cycle);
            per_cycle += w.div_ceil(64).max(1) as usize;
        }
        InputLog {
            first: 0,
            inputs,
            widths,
            offsets,
            per_cycle,
            data: vec![],
        }
    }

    /// Number of cycles held.
    pub fn cycles(&self) -> u64 {
        (self.data.len() / self.per_cycle.max(1)) as u64
    }

    /// The first cycle held.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// One past the last cycle held.
    pub fn end(&self) -> u64 {
        self.first + self.cycles()
    }

    /// Forget the cycles before `c`.
    pub fn drop_before(&mut self, c: u64) {
        if c <= self.first {
            return;
        }
        let n = (c.min(self.end()) - self.first) as usize * self.per_cycle;
        self.data.drain(..n);
        self.first = c;
    }

    /// Append the input positions of `ports` as the next cycle.
    #[inline]
    pub fn push(&mut self, ports: &[Bits]) {
        for (k, &i) in self.inputs.iter().enumerate() {
            let w = ports[i].words();
            let n = self.widths[k].div_ceil(64).max(1) as usize;
            self.data.extend_from_slice(&w[..n.min(w.len())]);
            for _ in w.len()..n {
                self.data.push(0);
            }
        }
    }

    /// Write cycle `c`'s inputs into `ports`.
    #[inline]
    pub fn apply(&self, c: u64, ports: &mut [Bits]) {
        let base = (c - self.first) as usize * self.per_cycle;
        for (k, &i) in self.inputs.iter().enumerate() {
            let n = self.widths[k].div_ceil(64).max(1) as usize;
            let off = base + self.offsets[k];
            let w = &self.data[off..off + n];
            // Most inputs repeat from cycle to cycle: skip the (slower) rewrite.
            if !ports[i].same_words(w) {
                ports[i].set_words(w);
            }
        }
    }

    /// Cycle `c`'s inputs as (name, hex) pairs.
    pub fn named_hex(&self, desc: &UnitDesc, c: u64) -> Vec<(String, String)> {
        self.values(c)
            .into_iter()
            .zip(&self.inputs)
            .map(|(b, &i)| (desc.ports[i].name.to_string(), b.to_hex()))
            .collect()
    }

    fn values(&self, c: u64) -> Vec<Bits> {
        let base = (c - self.first) as usize * self.per_cycle;
        self.widths
            .iter()
            .enumerate()
            .map(|(k, &w)| {
                let mut b = Bits::zero(w);
                let n = w.div_ceil(64).max(1) as usize;
                let off = base + self.offsets[k];
                b.set_words(&self.data[off..off + n]);
                b
            })
            .collect()
    }

    fn line(&self, c: u64) -> String {
        let v: Vec<String> = self.values(c).iter().map(Bits::to_hex).collect();
        v.join(" ")
    }

    fn push_line(&mut self, line: &str, lineno: usize) -> Result<(), String> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != self.widths.len() {
            return Err(format!(
                "line {lineno}: {} values, expected {} (one per input port)",
                fields.len(),
                self.widths.len()
            ));
        }
        for (f, &w) in fields.iter().zip(&self.widths) {
            let b = Bits::from_hex(w, f).map_err(|e| format!("line {lineno}: {e}"))?;
            self.data.extend_from_slice(b.words());
        }
        Ok(())
    }
}

/// The JSON header line of a replay file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ReplayHeader {
    pub format: String,
    pub unit: String,
    pub instance: String,
    pub params: Vec<(String, u64)>,
    pub rtl: RtlSource,
    /// (name, width) of every input port, in the order of each cycle line.
    pub inputs: Vec<(String, u32)>,
    /// The cycle number of the first cycle line (0, or the cycle after the last reset
    /// before the divergence: a reset cycle leaves both sides in the reset state, so what
    /// came before it is not needed).
    #[serde(default)]
    pub first_cycle: u64,
    /// The cycle that diverged (the last compared cycle of the file).
    pub fail_cycle: Option<u64>,
    /// The first differing port at that cycle.
    pub fail_port: Option<String>,
    /// Cycle lines to compare.
    pub cycles: u64,
    /// Cycle lines after `post` (VCD windows only).
    pub post_cycles: u64,
}

/// A loaded replay file.
#[derive(Debug, Clone)]
pub struct Replay {
    pub header: ReplayHeader,
    /// The compared cycles followed by the post cycles.
    pub log: InputLog,
}

impl Replay {
    /// Write `log` (`compare` cycles to compare, then the rest as post cycles).
    pub(crate) fn write(
        path: &Path,
        header: &ReplayHeader,
        log: &InputLog,
    ) -> Result<(), CosimError> {
        let io = |e: std::io::Error| CosimError::Io(format!("writing {}: {e}", path.display()));
        let f = std::fs::File::create(path).map_err(io)?;
        let mut w = BufWriter::new(f);
        serde_json::to_writer(&mut w, header)
            .map_err(|e| CosimError::Io(format!("writing {}: {e}", path.display())))?;
        writeln!(w).map_err(io)?;
        let start = header.first_cycle;
        for c in start..start + header.cycles {
            writeln!(w, "{}", log.line(c)).map_err(io)?;
        }
        if header.post_cycles > 0 {
            writeln!(w, "post").map_err(io)?;
            for c in start + header.cycles..start + header.cycles + header.post_cycles {
                writeln!(w, "{}", log.line(c)).map_err(io)?;
            }
        }
        w.flush().map_err(io)
    }

    /// Read a replay file; `desc` must be the unit it names.
    pub fn load(path: &Path, desc: &'static UnitDesc) -> Result<(Replay, Params), CosimError> {
        let bad = |m: String| CosimError::Replay(format!("{}: {m}", path.display()));
        let f = std::fs::File::open(path)
            .map_err(|e| CosimError::Io(format!("cannot read {}: {e}", path.display())))?;
        let mut lines = std::io::BufReader::new(f).lines();
        let first = lines
            .next()
            .ok_or_else(|| bad("empty file".into()))?
            .map_err(|e| bad(e.to_string()))?;
        let header: ReplayHeader =
            serde_json::from_str(&first).map_err(|e| bad(format!("line 1: {e}")))?;
        if header.format != FORMAT {
            return Err(bad(format!(
                "format `{}`, expected `{FORMAT}`",
                header.format
            )));
        }
        if header.unit != desc.name {
            return Err(bad(format!(
                "the file is for unit {}, not {}",
                header.unit, desc.name
            )));
        }
        let params = static_params(desc, &header.params).map_err(bad)?;
        let mut log = InputLog::new(desc, &params);
        log.first = header.first_cycle;
        let expect: Vec<(String, u32)> = log
            .inputs
            .iter()
            .zip(&log.widths)
            .map(|(&i, &w)| (desc.ports[i].name.to_string(), w))
            .collect();
        if expect != header.inputs {
            return Err(bad(format!(
                "input ports {:?} do not match the unit's {expect:?}",
                header.inputs
            )));
        }
        let (mut main, mut post) = (0u64, 0u64);
        let mut in_post = false;
        for (n, line) in lines.enumerate() {
            let line = line.map_err(|e| bad(e.to_string()))?;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if line == "post" {
                in_post = true;
                continue;
            }
            log.push_line(line, n + 2).map_err(bad)?;
            if in_post {
                post += 1;
            } else {
                main += 1;
            }
        }
        if main != header.cycles || post != header.post_cycles {
            return Err(bad(format!(
                "{main}+{post} cycle lines, the header says {}+{}",
                header.cycles, header.post_cycles
            )));
        }
        Ok((Replay { header, log }, params))
    }

    /// A stimulus that drives the recorded compared cycles (not the post cycles).
    pub fn stimulus(&self) -> ReplayStimulus {
        ReplayStimulus {
            log: self.log.clone(),
            end: self.header.first_cycle + self.header.cycles,
        }
    }
}

fn static_params(desc: &'static UnitDesc, values: &[(String, u64)]) -> Result<Params, String> {
    desc.params(values)
}

/// Drives recorded inputs; stateless (the cycle number indexes the log), so rewindable.
/// Run it with [`Cosim::run_from`] at the log's first cycle.
#[derive(Debug, Clone)]
pub struct ReplayStimulus {
    log: InputLog,
    end: u64,
}

impl ReplayStimulus {
    pub fn new(log: InputLog) -> ReplayStimulus {
        let end = log.end();
        ReplayStimulus { log, end }
    }

    /// The first cycle it drives.
    pub fn first_cycle(&self) -> u64 {
        self.log.first()
    }
}

impl Stimulus for ReplayStimulus {
    #[inline]
    fn drive(&mut self, cycle: u64, ports: &mut [Bits]) -> bool {
        if cycle >= self.end || cycle < self.log.first() {
            return false;
        }
        self.log.apply(cycle, ports);
        true
    }
    fn reads_outputs(&self) -> bool {
        false
    }
    fn can_rewind(&self) -> bool {
        true
    }
    fn rewind(&mut self) {}
}

/// Re-run a replay file of a registered unit (`warpforge_model::units::ALL`): builds the
/// recorded RTL (cached) and runs it in lockstep. A reproduced divergence comes back as
/// `Err(CosimError::Divergence)`; no new artifacts are written.
pub fn replay(path: &Path) -> Result<Summary, CosimError> {
    let desc = replay_unit(path)?;
    replay_with(path, desc, &BuildOptions::default())
}

/// The registered unit a replay file is of, and its parameters (to build other RTL of the
/// same unit to replay it against).
pub fn replay_unit_params(path: &Path) -> Result<(&'static UnitDesc, Params), CosimError> {
    let desc = replay_unit(path)?;
    let (_, params) = Replay::load(path, desc)?;
    Ok((desc, params))
}

fn replay_unit(path: &Path) -> Result<&'static UnitDesc, CosimError> {
    use std::io::BufRead;
    let f = std::fs::File::open(path)
        .map_err(|e| CosimError::Io(format!("cannot read {}: {e}", path.display())))?;
    // Only the header line (a replay file can be large).
    let mut line = String::new();
    std::io::BufReader::new(f)
        .read_line(&mut line)
        .map_err(|e| CosimError::Io(format!("cannot read {}: {e}", path.display())))?;
    let header: ReplayHeader = serde_json::from_str(&line)
        .map_err(|e| CosimError::Replay(format!("{}: line 1: {e}", path.display())))?;
    warpforge_model::units::find(&header.unit).map_err(|e| {
        CosimError::Replay(format!(
            "{}: {e}; for an unregistered unit use replay_with",
            path.display()
        ))
    })
}

/// [`replay`] for any unit description.
pub fn replay_with(
    path: &Path,
    desc: &'static UnitDesc,
    opts: &BuildOptions,
) -> Result<Summary, CosimError> {
    replay_against(path, desc, None, opts)
}

/// Replay the stimulus of `path` against `rtl` (e.g. a fixed version of the RTL that
/// diverged), or against the RTL stored in the file when `None`. The model is the golden
/// reference either way: a match means the new RTL agrees with it over every recorded cycle.
pub fn replay_against(
    path: &Path,
    desc: &'static UnitDesc,
    rtl: Option<RtlSource>,
    opts: &BuildOptions,
) -> Result<Summary, CosimError> {
    let (r, params) = Replay::load(path, desc)?;
    let rtl = rtl.unwrap_or_else(|| r.header.rtl.clone());
    let cosim = Cosim::new(desc, params, rtl, opts)?
        .with_instance(r.header.instance.clone())
        .with_failure_dir(None);
    let mut stim = r.stimulus();
    let instance = r.header.instance.clone();
    cosim
        .run_from(&instance, &mut stim, r.header.first_cycle)
        .map_err(|e| match e {
            CosimError::Divergence(mut d) => {
                d.replay = Some(path.to_path_buf());
                CosimError::Divergence(d)
            }
            e => e,
        })
}
