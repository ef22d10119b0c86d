//! Replay files: everything needed to reproduce a divergence alone, and to drive another
//! simulator with the same stimulus and the model's expected outputs.
//!
//! Format `warpforge-replay-2` (compact text, streamable): the first line is a JSON header
//! (unit, parameters, instance, the RTL source texts, the input ports, the output ports
//! with their roles, the failing cycle and port); then one line per cycle from the first
//! cycle after the harness's implicit reset up to and including the failing cycle; then
//! optionally a line `post` followed by up to 32 further cycles that only the VCD windows
//! use (the harness does not compare them). A cycle line is the hexadecimal values of every
//! input port in port order, separated by spaces, then `|`, then the model's value of every
//! non-input port (outputs and debug state, in port order) at that cycle, as the lockstep
//! run compares it (inputs applied, clock low). An output value is written in one of three
//! forms: hexadecimal; `=`, the same as on the line before (zero before the first line); or
//! `^` and a comma-separated list of bit positions, the line before's value with those bits
//! flipped (a wide debug vector that changes in a bit or two).
//!
//! Files of the earlier format `warpforge-replay-1` (inputs only, no `|`) still load and
//! re-run; their expected outputs are recomputed with the model where needed.

use crate::build::{BuildOptions, RtlSource};
use crate::lockstep::{Cosim, Summary};
use crate::{CosimError, Stimulus};
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;
use warpforge_model::units::contract::{Bits, Params, Role, UnitDesc};
use warpforge_model::units::layout::LayoutAt;

/// The format written.
pub const FORMAT: &str = "warpforge-replay-2";
/// The earlier format (inputs only), still read.
pub const FORMAT_V1: &str = "warpforge-replay-1";

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
    /// The declared field layout of each input, if any (listings name its elements).
    layouts: Vec<Option<LayoutAt>>,
}

impl InputLog {
    pub fn new(desc: &UnitDesc, params: &Params) -> InputLog {
        let inputs: Vec<usize> = (0..desc.ports.len())
            .filter(|&i| desc.ports[i].role.is_input())
            .collect();
        InputLog::of_ports(desc, params, inputs)
    }

    /// A log of other ports than the inputs (`ports`: indices in the unit's port list, in
    /// order), e.g. the model's expected outputs of a replay.
    pub fn of_ports(desc: &UnitDesc, params: &Params, inputs: Vec<usize>) -> InputLog {
        let widths_all = desc.widths(params);
        let widths: Vec<u32> = inputs.iter().map(|&i| widths_all[i]).collect();
        let mut offsets = vec![];
        let mut per_cycle = 0;
        for w in &widths {
            offsets.push(per_cycle);
            per_cycle += w.div_ceil(64).max(1) as usize;
        }
        let layouts = inputs
            .iter()
            .map(|&i| desc.ports[i].layout.and_then(|l| l.at(params).ok()))
            .collect();
        InputLog {
            first: 0,
            inputs,
            widths,
            offsets,
            per_cycle,
            data: vec![],
            layouts,
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

    /// Cycle `c`'s inputs as (name, hex) pairs; an input with a field layout gives one
    /// pair per field (`rsv_reg[0]`, `rsv_reg[1]`).
    pub fn named_hex(&self, desc: &UnitDesc, c: u64) -> Vec<(String, String)> {
        let mut out = vec![];
        for ((b, &i), layout) in self
            .values(c)
            .into_iter()
            .zip(&self.inputs)
            .zip(&self.layouts)
        {
            let name = desc.ports[i].name;
            match layout {
                Some(l) => out.extend(
                    l.split(&b)
                        .into_iter()
                        .map(|(path, v)| (format!("{name}{path}"), v.to_hex())),
                ),
                None => out.push((name.to_string(), b.to_hex())),
            }
        }
        out
    }

    /// Cycle `c`'s values, one per port held, in order.
    pub fn values(&self, c: u64) -> Vec<Bits> {
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
    /// (name, width, role) of every non-input port (outputs and debug state), in the order
    /// of the expected values after `|` (empty in format 1).
    #[serde(default)]
    pub outputs: Vec<(String, u32, Role)>,
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
    /// The model's expected values of the functional outputs (registered and
    /// combinational, not debug state) over the same cycles, as recorded in the file
    /// (`None` for format 1; see [`Replay::expected_outputs`]). The debug-state values are
    /// checked for form but not kept: they can be wide.
    pub expected: Option<InputLog>,
}

/// The functional outputs: every port that is neither an input nor debug state.
pub fn functional_outputs(desc: &UnitDesc) -> Vec<usize> {
    (0..desc.ports.len())
        .filter(|&i| !matches!(desc.ports[i].role, Role::Input | Role::Debug))
        .collect()
}

/// One expected value in a cycle line: `=` (unchanged), `^bits` (flipped) or hex.
fn encode_value(prev: &Bits, v: &Bits) -> String {
    if prev == v {
        return "=".into();
    }
    let hex = v.to_hex();
    let flips = prev.diff_bits(v);
    let list: Vec<String> = flips.iter().map(u32::to_string).collect();
    let short = format!("^{}", list.join(","));
    if short.len() < hex.len() {
        short
    } else {
        hex
    }
}

/// Parse [`encode_value`]'s output into `value` (holding the line before's value).
fn decode_value(value: &mut Bits, token: &str) -> Result<(), String> {
    if token == "=" {
        return Ok(());
    }
    if let Some(list) = token.strip_prefix('^') {
        for b in list.split(',') {
            let b: u32 = b
                .parse()
                .map_err(|_| format!("`{token}`: `{b}` is not a bit position"))?;
            if b >= value.width() {
                return Err(format!(
                    "`{token}`: bit {b} is outside the {}-bit port",
                    value.width()
                ));
            }
            value.set_bit(b, !value.bit(b));
        }
        return Ok(());
    }
    *value = Bits::from_hex(value.width(), token)?;
    Ok(())
}

impl Replay {
    /// Write `log` (`header.cycles` cycles to compare, then `header.post_cycles` more) with
    /// the expected outputs of `desc`'s model at `params`, run alone over the same inputs
    /// after the implicit reset.
    pub(crate) fn write(
        path: &Path,
        header: &ReplayHeader,
        log: &InputLog,
        desc: &UnitDesc,
        params: &Params,
    ) -> Result<(), CosimError> {
        let io = |e: std::io::Error| CosimError::Io(format!("writing {}: {e}", path.display()));
        let f = std::fs::File::create(path).map_err(io)?;
        let mut w = BufWriter::new(f);
        serde_json::to_writer(&mut w, header)
            .map_err(|e| CosimError::Io(format!("writing {}: {e}", path.display())))?;
        writeln!(w).map_err(io)?;
        let outputs: Vec<usize> = (0..desc.ports.len())
            .filter(|&i| !desc.ports[i].role.is_input())
            .collect();
        let mut model = (desc.build)(params);
        let mut ports = desc.zero_ports(params);
        model.tick(&ports); // the implicit reset cycle
        let mut prev = desc.zero_ports(params);
        let start = header.first_cycle;
        let main_end = start + header.cycles;
        let mut line = String::new();
        for c in start..main_end + header.post_cycles {
            if c == main_end {
                writeln!(w, "post").map_err(io)?;
            }
            log.apply(c, &mut ports);
            model.all_outputs(&mut ports);
            line.clear();
            line.push_str(&log.line(c));
            line.push_str(" |");
            for &i in &outputs {
                line.push(' ');
                line.push_str(&encode_value(&prev[i], &ports[i]));
                prev[i].clone_from(&ports[i]);
            }
            writeln!(w, "{line}").map_err(io)?;
            model.tick(&ports);
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
        let header = parse_header(&first).map_err(bad)?;
        if header.unit != desc.name {
            return Err(bad(format!(
                "the file is for unit {}, not {}",
                header.unit, desc.name
            )));
        }
        let v2 = header.format == FORMAT;
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
        let widths = desc.widths(&params);
        let outputs: Vec<usize> = (0..desc.ports.len())
            .filter(|&i| !desc.ports[i].role.is_input())
            .collect();
        if v2 {
            let expect: Vec<(String, u32, Role)> = outputs
                .iter()
                .map(|&i| {
                    (
                        desc.ports[i].name.to_string(),
                        widths[i],
                        desc.ports[i].role,
                    )
                })
                .collect();
            if expect != header.outputs {
                return Err(bad(format!(
                    "output ports {:?} do not match the unit's {expect:?}",
                    header.outputs
                )));
            }
        }
        let mut expected = InputLog::of_ports(desc, &params, functional_outputs(desc));
        expected.first = header.first_cycle;
        // The current value of every output (the `=` and `^` forms refer to it).
        let mut values = desc.zero_ports(&params);
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
            let lineno = n + 2;
            let (ins, outs) = match (v2, line.split_once('|')) {
                (true, Some((i, o))) => (i, Some(o)),
                (false, None) => (line, None),
                (true, None) => {
                    return Err(bad(format!(
                        "line {lineno}: no `|` before the expected outputs (format {FORMAT})"
                    )))
                }
                (false, Some(_)) => {
                    return Err(bad(format!(
                        "line {lineno}: `|` in a file of format {FORMAT_V1} (inputs only)"
                    )))
                }
            };
            log.push_line(ins, lineno).map_err(bad)?;
            if let Some(outs) = outs {
                let tokens: Vec<&str> = outs.split_whitespace().collect();
                if tokens.len() != outputs.len() {
                    return Err(bad(format!(
                        "line {lineno}: {} expected values, expected {} (one per output port)",
                        tokens.len(),
                        outputs.len()
                    )));
                }
                for (&i, t) in outputs.iter().zip(tokens) {
                    decode_value(&mut values[i], t).map_err(|e| {
                        bad(format!("line {lineno}: port {}: {e}", desc.ports[i].name))
                    })?;
                }
                expected.push(&values);
            }
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
        let expected = v2.then_some(expected);
        Ok((
            Replay {
                header,
                log,
                expected,
            },
            params,
        ))
    }

    /// A stimulus that drives the recorded compared cycles (not the post cycles).
    pub fn stimulus(&self) -> ReplayStimulus {
        ReplayStimulus {
            log: self.log.clone(),
            end: self.header.first_cycle + self.header.cycles,
        }
    }

    /// The expected values of the functional outputs over every cycle of the file: the
    /// recorded ones, or (format 1) the model's, run alone over the recorded inputs.
    pub fn expected_outputs(&self, desc: &UnitDesc, params: &Params) -> InputLog {
        match &self.expected {
            Some(e) => e.clone(),
            None => model_outputs(desc, params, &self.log),
        }
    }
}

/// Where the model computes other functional outputs than a replay file recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChange {
    pub cycle: u64,
    pub port: String,
    /// The value in the file, and the model's now (hex).
    pub recorded: String,
    pub now: String,
}

impl Replay {
    /// The first compared cycle and functional output where today's model differs from the
    /// expected value recorded in the file (the model changed since the file was written),
    /// or `None` (also for format 1, which records none).
    pub fn model_change(&self, desc: &UnitDesc, params: &Params) -> Option<ModelChange> {
        let recorded = self.expected.as_ref()?;
        let now = model_outputs(desc, params, &self.log);
        let end = self.header.first_cycle + self.header.cycles;
        for c in recorded.first()..end.min(recorded.end()) {
            let (r, n) = (recorded.values(c), now.values(c));
            if let Some(k) = (0..r.len()).find(|&k| r[k] != n[k]) {
                return Some(ModelChange {
                    cycle: c,
                    port: desc.ports[recorded.inputs[k]].name.to_string(),
                    recorded: r[k].to_hex(),
                    now: n[k].to_hex(),
                });
            }
        }
        None
    }
}

/// The functional outputs of `desc`'s model at `params` over every cycle of `log`, run
/// alone after the implicit reset cycle (what the lockstep run compares, clock low).
pub fn model_outputs(desc: &UnitDesc, params: &Params, log: &InputLog) -> InputLog {
    let mut out = InputLog::of_ports(desc, params, functional_outputs(desc));
    out.first = log.first();
    let mut model = (desc.build)(params);
    let mut ports = desc.zero_ports(params);
    model.tick(&ports);
    for c in log.first()..log.end() {
        log.apply(c, &mut ports);
        model.outputs(&mut ports);
        out.push(&ports);
        model.tick(&ports);
    }
    out
}

/// The header line, with a clear error for a format this version does not read.
fn parse_header(line: &str) -> Result<ReplayHeader, String> {
    // The format first: a file of another version may not parse as this header.
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("line 1: not a replay header: {e}"))?;
    let format = v
        .get("format")
        .and_then(|f| f.as_str())
        .unwrap_or("")
        .to_string();
    if format != FORMAT && format != FORMAT_V1 {
        return Err(format!(
            "replay format `{format}`: this warpforge reads `{FORMAT}` and `{FORMAT_V1}`"
        ));
    }
    serde_json::from_value(v).map_err(|e| format!("line 1 ({format}): {e}"))
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
    let header =
        parse_header(&line).map_err(|e| CosimError::Replay(format!("{}: {e}", path.display())))?;
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
