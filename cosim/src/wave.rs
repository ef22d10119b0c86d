//! The VCD window with both sides: every port of the unit model (scope `model`) and of the
//! RTL (scope `rtl`) side by side, written with the `vcd` crate on the same time axis as
//! the Verilator trace (`10*cycle`: inputs applied and logic settled with the clock low;
//! `10*cycle + 5`: after the rising edge), plus markers: `mismatch` is 1 through every
//! cycle in which any compared port differs, and `mismatch_<port>` through every cycle in
//! which that port differs (one marker per port that differs somewhere in the window).
//!
//! The markers describe the comparison the harness makes (at `10*cycle`, clock low) and hold
//! their value for the whole cycle.

use std::io::Write;
use vcd::{IdCode, TimescaleUnit, Value};
use warpforge_model::units::contract::{Bits, Params, UnitDesc};

/// One sample of both sides.
#[derive(Debug, Clone)]
pub struct Sample {
    pub time: u64,
    pub clk: bool,
    /// Every port of the model, in port-list order.
    pub model: Vec<Bits>,
    /// Every port of the RTL (the inputs are the ones it was given).
    pub rtl: Vec<Bits>,
    /// Ports that differ in this sample's cycle (port-list order; inputs never).
    pub differ: Vec<bool>,
}

/// A VCD of both sides (see the module documentation), written from buffered samples so
/// that the header can declare a marker for exactly the ports that differ in the window.
pub struct BothVcd<W: Write> {
    w: vcd::Writer<W>,
    clk: IdCode,
    mismatch: IdCode,
    /// (port index, marker id).
    markers: Vec<(usize, IdCode)>,
    model_ids: Vec<IdCode>,
    rtl_ids: Vec<IdCode>,
    prev_model: Vec<Option<Bits>>,
    prev_rtl: Vec<Option<Bits>>,
    prev_bits: Vec<Option<bool>>,
    bits: Vec<Value>,
}

impl<W: Write> BothVcd<W> {
    /// Write `samples` (in time order) as one VCD.
    pub fn write(
        out: W,
        desc: &UnitDesc,
        params: &Params,
        instance: &str,
        samples: &[Sample],
    ) -> std::io::Result<()> {
        let n = desc.ports.len();
        let marked: Vec<usize> = (0..n)
            .filter(|&i| samples.iter().any(|s| s.differ[i]))
            .collect();
        let mut v = BothVcd::new(out, desc, params, instance, &marked)?;
        for s in samples {
            v.dump(s)?;
        }
        v.w.flush()
    }

    /// Header: scope `<unit>` with `clk`, `mismatch` and `mismatch_<port>` for each port in
    /// `marked`, and sub-scopes `model` and `rtl` with every port by name.
    fn new(
        out: W,
        desc: &UnitDesc,
        params: &Params,
        instance: &str,
        marked: &[usize],
    ) -> std::io::Result<BothVcd<W>> {
        let mut w = vcd::Writer::new(out);
        w.version("warpforge-cosim: unit model and RTL")?;
        w.comment(&format!(
            "unit {} ({params}) instance {instance}: scope model = the Rust model, scope rtl = \
             the RTL's ports; mismatch = a compared port differs in this cycle",
            desc.name
        ))?;
        // Verilator writes picoseconds by default; the same unit keeps both files aligned.
        w.timescale(1, TimescaleUnit::PS)?;
        w.add_module(desc.name)?;
        let clk = w.add_wire(1, "clk")?;
        let mismatch = w.add_wire(1, "mismatch")?;
        let mut markers = vec![];
        for &i in marked {
            markers.push((
                i,
                w.add_wire(1, &format!("mismatch_{}", desc.ports[i].name))?,
            ));
        }
        let widths = desc.widths(params);
        let scope = |w: &mut vcd::Writer<W>, name: &str| -> std::io::Result<Vec<IdCode>> {
            w.add_module(name)?;
            let mut ids = vec![];
            for (p, &width) in desc.ports.iter().zip(&widths) {
                ids.push(w.add_wire(width, p.name)?);
            }
            w.upscope()?;
            Ok(ids)
        };
        let model_ids = scope(&mut w, "model")?;
        let rtl_ids = scope(&mut w, "rtl")?;
        w.upscope()?;
        w.enddefinitions()?;
        let n = model_ids.len();
        Ok(BothVcd {
            w,
            clk,
            mismatch,
            prev_bits: vec![None; 2 + markers.len()],
            markers,
            model_ids,
            rtl_ids,
            prev_model: vec![None; n],
            prev_rtl: vec![None; n],
            bits: vec![],
        })
    }

    fn scalar(&mut self, slot: usize, id: IdCode, v: bool) -> std::io::Result<()> {
        if self.prev_bits[slot] != Some(v) {
            self.w.change_scalar(id, v)?;
            self.prev_bits[slot] = Some(v);
        }
        Ok(())
    }

    fn ports(
        w: &mut vcd::Writer<W>,
        bits: &mut Vec<Value>,
        ids: &[IdCode],
        prev: &mut [Option<Bits>],
        ports: &[Bits],
    ) -> std::io::Result<()> {
        for (i, v) in ports.iter().enumerate() {
            if prev[i].as_ref() == Some(v) {
                continue;
            }
            if v.width() == 1 {
                w.change_scalar(ids[i], v.bit(0))?;
            } else {
                bits.clear();
                bits.extend((0..v.width()).rev().map(|b| Value::from(v.bit(b))));
                w.change_vector(ids[i], bits.iter().copied())?;
            }
            prev[i] = Some(v.clone());
        }
        Ok(())
    }

    /// Record one sample (only changes are written).
    fn dump(&mut self, s: &Sample) -> std::io::Result<()> {
        self.w.timestamp(s.time)?;
        self.scalar(0, self.clk, s.clk)?;
        self.scalar(1, self.mismatch, s.differ.iter().any(|&d| d))?;
        for k in 0..self.markers.len() {
            let (i, id) = self.markers[k];
            self.scalar(2 + k, id, s.differ[i])?;
        }
        Self::ports(
            &mut self.w,
            &mut self.bits,
            &self.model_ids,
            &mut self.prev_model,
            &s.model,
        )?;
        Self::ports(
            &mut self.w,
            &mut self.bits,
            &self.rtl_ids,
            &mut self.prev_rtl,
            &s.rtl,
        )
    }
}
