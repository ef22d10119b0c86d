//! The model's side of a VCD window: every port of the unit model, written with the `vcd`
//! crate on the same time axis as the RTL trace (`10*cycle`: inputs applied and logic
//! settled with the clock low; `10*cycle + 5`: after the rising edge).

use std::io::Write;
use vcd::{IdCode, TimescaleUnit, Value};
use warpforge_model::units::contract::{Bits, Params, UnitDesc};

pub struct ModelVcd<W: Write> {
    w: vcd::Writer<W>,
    clk: IdCode,
    ids: Vec<IdCode>,
    prev: Vec<Option<Bits>>,
    prev_clk: Option<bool>,
    bits: Vec<Value>,
}

impl<W: Write> ModelVcd<W> {
    /// Header: scope `<instance>` (module `desc.name`), `clk` and every port by name.
    pub fn new(
        out: W,
        desc: &UnitDesc,
        params: &Params,
        instance: &str,
    ) -> std::io::Result<ModelVcd<W>> {
        let mut w = vcd::Writer::new(out);
        w.version("warpforge-cosim unit model")?;
        w.comment(&format!(
            "unit {} ({params}) instance {instance}",
            desc.name
        ))?;
        // Verilator writes picoseconds by default; the same unit keeps both files aligned.
        w.timescale(1, TimescaleUnit::PS)?;
        w.add_module(desc.name)?;
        let clk = w.add_wire(1, "clk")?;
        let widths = desc.widths(params);
        let mut ids = vec![];
        for (p, &width) in desc.ports.iter().zip(&widths) {
            ids.push(w.add_wire(width, p.name)?);
        }
        w.upscope()?;
        w.enddefinitions()?;
        Ok(ModelVcd {
            w,
            clk,
            prev: vec![None; ids.len()],
            ids,
            prev_clk: None,
            bits: vec![],
        })
    }

    /// Record the values at `time` (only changes are written).
    pub fn dump(&mut self, time: u64, clk: bool, ports: &[Bits]) -> std::io::Result<()> {
        self.w.timestamp(time)?;
        if self.prev_clk != Some(clk) {
            self.w.change_scalar(self.clk, clk)?;
            self.prev_clk = Some(clk);
        }
        for (i, v) in ports.iter().enumerate() {
            if self.prev[i].as_ref() == Some(v) {
                continue;
            }
            if v.width() == 1 {
                self.w.change_scalar(self.ids[i], v.bit(0))?;
            } else {
                self.bits.clear();
                self.bits
                    .extend((0..v.width()).rev().map(|b| Value::from(v.bit(b))));
                self.w
                    .change_vector(self.ids[i], self.bits.iter().copied())?;
            }
            self.prev[i] = Some(v.clone());
        }
        Ok(())
    }

    /// Flush everything written so far.
    pub fn close(mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}
