//! Toy units for the harness tests: small hand-written Verilog plus their Rust models,
//! described with the same unit contract as the real units.
#![allow(dead_code)]

use warpforge_cosim::{BuildOptions, Cosim, RtlSource};
use warpforge_model::units::contract::{
    Bits, GpuUse, ParamSpec, Params, PortSpec, Role, UnitDesc, UnitModel,
};
use warpforge_model::units::layout::{Field, Layout};

const fn port(name: &'static str, role: Role, width: &'static str) -> PortSpec {
    PortSpec {
        name,
        role,
        width,
        doc: "",
        layout: None,
    }
}

/// `dbg` = `{count, acc}`: one element of two named fields, the accumulator first (LSB).
const DBG_LAYOUT: Layout = Layout {
    dims: &[],
    fields: &[
        Field {
            name: "acc",
            width: "70",
        },
        Field {
            name: "count",
            width: "W",
        },
    ],
};

// ---------------------------------------------------------------------------------------
// toy_counter: a loadable counter (registered), its next value (combinational), a 70-bit
// rotating accumulator (registered, wide input and output), a combinational compare and a
// W+70-bit debug port.

pub static COUNTER_DESC: UnitDesc = UnitDesc {
    name: "toy_counter",
    summary: "loadable counter with a 70-bit accumulator",
    spec: "cosim tests",
    params: &[ParamSpec {
        name: "W",
        default: 8,
        min: 4,
        max: 64,
        doc: "counter width",
    }],
    ports: &[
        port("rst_n", Role::Input, "1"),
        port("en", Role::Input, "1"),
        port("load", Role::Input, "1"),
        port("load_val", Role::Input, "W"),
        port("din", Role::Input, "70"),
        port("count", Role::Registered, "W"),
        port("next", Role::Combinational, "W"),
        port("acc", Role::Registered, "70"),
        port("hit", Role::Combinational, "1"),
        PortSpec {
            layout: Some(&DBG_LAYOUT),
            ..port("dbg", Role::Debug, "W+70")
        },
    ],
    standard_sets: &[&[]],
    check: |_| Ok(()),
    build: |p| Box::new(Counter::new(p)),
    gpu: |_| GpuUse::Standalone,
    localparams: |_| vec![],
    coverage: &[],
    scaling: &[],
    seed_costs: &[],
};

pub const COUNTER_V: &str = r#"
module toy_counter #(parameter W = 8) (
  input clk, input rst_n, input en, input load, input [W-1:0] load_val, input [69:0] din,
  output reg [W-1:0] count, output [W-1:0] next, output reg [69:0] acc, output hit,
  output [W+69:0] dbg
);
  always @(posedge clk) begin
    if (!rst_n) begin
      count <= {W{1'b0}};
      acc <= 70'd0;
    end else begin
      if (load) count <= load_val;
      else if (en) count <= count + 1'b1;
      acc <= {acc[68:0], acc[69]} ^ din;
    end
  end
  assign next = !rst_n ? {W{1'b0}} : load ? load_val : en ? count + 1'b1 : count;
  assign hit = rst_n && (din[3:0] == count[3:0]);
  assign dbg = {count, acc};
endmodule
"#;

pub struct Counter {
    params: Params,
    w: u32,
    count: u64,
    acc: u128,
}

const ACC_MASK: u128 = (1u128 << 70) - 1;

fn get128(b: &Bits) -> u128 {
    let w = b.words();
    w[0] as u128 | (w.get(1).copied().unwrap_or(0) as u128) << 64
}

fn set128(b: &mut Bits, v: u128) {
    b.set_words(&[v as u64, (v >> 64) as u64]);
}

impl Counter {
    pub fn new(p: &Params) -> Counter {
        Counter {
            params: p.clone(),
            w: p.get("W") as u32,
            count: 0,
            acc: 0,
        }
    }
    fn mask(&self) -> u64 {
        warpforge_model::units::contract::low_mask(self.w)
    }
}

impl UnitModel for Counter {
    fn desc(&self) -> &'static UnitDesc {
        &COUNTER_DESC
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn outputs(&self, p: &mut [Bits]) {
        let rst_n = p[0].to_u64() != 0;
        let (en, load) = (p[1].to_u64() != 0, p[2].to_u64() != 0);
        p[5].set_u64(self.count);
        let next = if !rst_n {
            0
        } else if load {
            p[3].to_u64()
        } else if en {
            self.count.wrapping_add(1) & self.mask()
        } else {
            self.count
        };
        p[6].set_u64(next);
        set128(&mut p[7], self.acc);
        let hit = rst_n && (p[4].to_u64() & 0xf) == (self.count & 0xf);
        p[8].set_u64(hit as u64);
    }
    fn debug_state(&self, p: &mut [Bits]) {
        let dbg = &mut p[9];
        dbg.set_field(0, 64, self.acc as u64);
        dbg.set_field(64, 6, (self.acc >> 64) as u64);
        dbg.set_field(70, self.w, self.count);
    }
    fn tick(&mut self, p: &[Bits]) {
        if p[0].to_u64() == 0 {
            self.count = 0;
            self.acc = 0;
            return;
        }
        if p[2].to_u64() != 0 {
            self.count = p[3].to_u64();
        } else if p[1].to_u64() != 0 {
            self.count = self.count.wrapping_add(1) & self.mask();
        }
        let rot = ((self.acc << 1) | (self.acc >> 69)) & ACC_MASK;
        self.acc = rot ^ (get128(&p[4]) & ACC_MASK);
    }
}

// ---------------------------------------------------------------------------------------
// toy_ptrs: queue pointers, an occupancy counter, sticky error, set/clear flag mask. Rich in
// comparisons, increments, masks and reset assignments: the mutant test's subject.

pub static PTRS_DESC: UnitDesc = UnitDesc {
    name: "toy_ptrs",
    summary: "queue pointers and flags",
    spec: "cosim tests",
    params: &[],
    ports: &[
        port("rst_n", Role::Input, "1"),
        port("push", Role::Input, "1"),
        port("pop", Role::Input, "1"),
        port("set", Role::Input, "8"),
        port("clr", Role::Input, "8"),
        port("wr_ptr", Role::Registered, "3"),
        port("rd_ptr", Role::Registered, "3"),
        port("count", Role::Registered, "4"),
        port("full", Role::Combinational, "1"),
        port("empty", Role::Combinational, "1"),
        port("flags", Role::Registered, "8"),
        port("err", Role::Registered, "1"),
        port("accept", Role::Combinational, "1"),
    ],
    standard_sets: &[&[]],
    check: |_| Ok(()),
    build: |p| Box::new(Ptrs::new(p)),
    gpu: |_| GpuUse::Standalone,
    localparams: |_| vec![],
    coverage: &[],
    scaling: &[],
    seed_costs: &[],
};

pub const PTRS_V: &str = r#"// Queue pointers for the mutant tests.
module toy_ptrs (
  input clk, input rst_n, input push, input pop, input [7:0] set, input [7:0] clr,
  output reg [2:0] wr_ptr, output reg [2:0] rd_ptr, output reg [3:0] count,
  output full, output empty, output reg [7:0] flags, output reg err, output accept
);
  wire do_push = push && (count != 4'd8);
  wire do_pop = pop && (count != 4'd0);
  assign full = rst_n && (count == 4'd8);
  assign empty = rst_n && (count < 4'd1);
  assign accept = rst_n && (do_push | do_pop);
  always @(posedge clk) begin
    if (!rst_n) begin
      wr_ptr <= 3'd0;
      rd_ptr <= 3'd0;
      count <= 4'd0;
      flags <= 8'h81;
      err <= 1'b0;
    end else begin
      if (do_push) wr_ptr <= wr_ptr + 3'd1;
      if (do_pop) rd_ptr <= rd_ptr + 3'd1;
      if (do_push && !do_pop) count <= count + 4'd1;
      else if (do_pop && !do_push) count <= count - 4'd1;
      flags <= (flags | set) & ~clr;
      if (pop && count == 4'd0) err <= 1'b1;
    end
  end
endmodule
"#;

pub struct Ptrs {
    params: Params,
    wr: u64,
    rd: u64,
    count: u64,
    flags: u64,
    err: bool,
}

impl Ptrs {
    pub fn new(p: &Params) -> Ptrs {
        Ptrs {
            params: p.clone(),
            wr: 0,
            rd: 0,
            count: 0,
            flags: 0x81,
            err: false,
        }
    }
    fn moves(&self, p: &[Bits]) -> (bool, bool) {
        let push = p[1].to_u64() != 0 && self.count != 8;
        let pop = p[2].to_u64() != 0 && self.count != 0;
        (push, pop)
    }
}

impl UnitModel for Ptrs {
    fn desc(&self) -> &'static UnitDesc {
        &PTRS_DESC
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn outputs(&self, p: &mut [Bits]) {
        let rst_n = p[0].to_u64() != 0;
        let (push, pop) = self.moves(p);
        p[5].set_u64(self.wr);
        p[6].set_u64(self.rd);
        p[7].set_u64(self.count);
        p[8].set_u64((rst_n && self.count == 8) as u64);
        p[9].set_u64((rst_n && self.count == 0) as u64);
        p[10].set_u64(self.flags);
        p[11].set_u64(self.err as u64);
        p[12].set_u64((rst_n && (push || pop)) as u64);
    }
    fn tick(&mut self, p: &[Bits]) {
        if p[0].to_u64() == 0 {
            *self = Ptrs::new(&self.params);
            return;
        }
        let (push, pop) = self.moves(p);
        if p[2].to_u64() != 0 && self.count == 0 {
            self.err = true;
        }
        if push {
            self.wr = (self.wr + 1) & 7;
        }
        if pop {
            self.rd = (self.rd + 1) & 7;
        }
        if push && !pop {
            self.count += 1;
        } else if pop && !push {
            self.count -= 1;
        }
        self.flags = (self.flags | p[3].to_u64()) & !p[4].to_u64() & 0xff;
    }
}

/// Build options for the tests: the shared cache (`$WARPFORGE_CACHE` or ~/.cache/warpforge)
/// so repeated test runs reuse built models.
pub fn opts() -> BuildOptions {
    BuildOptions::default()
}

pub fn counter_rtl(text: &str) -> RtlSource {
    RtlSource::single("toy_counter", text)
}

/// A co-simulation of the toy counter at `params` against the Verilog `text`, built with
/// the tests' options.
pub fn counter_cosim(params: &Params, text: &str) -> Cosim {
    Cosim::new(&COUNTER_DESC, params.clone(), counter_rtl(text), &opts())
        .unwrap_or_else(|e| panic!("{e}"))
}

pub fn ptrs_rtl() -> RtlSource {
    RtlSource::single("toy_ptrs", PTRS_V)
}

/// A fresh directory for failure artifacts of one test (removed when dropped).
pub fn out_dir(test: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("warpforge-cosim-test-{test}-"))
        .tempdir()
        .unwrap()
}

// ---------------------------------------------------------------------------------------
// toy_widths: continuous assignments whose value depends on the width and sign context of
// their expression (a carry that the target's width drops, an unsized literal, an
// arithmetic shift of a signed operand, a concatenation). A mutant of one of them that
// widens the expression (`1'b1` -> `2`) changes the context of the whole right-hand side;
// the mutant schema must keep every branch's own context (the mutant-schema test).

pub static WIDTHS_DESC: UnitDesc = UnitDesc {
    name: "toy_widths",
    summary: "width- and sign-sensitive continuous assignments",
    spec: "cosim tests",
    params: &[],
    ports: &[
        port("rst_n", Role::Input, "1"),
        port("a", Role::Input, "4"),
        port("b", Role::Input, "4"),
        port("half", Role::Combinational, "4"),
        port("sum", Role::Combinational, "5"),
        port("shr", Role::Combinational, "4"),
        port("dec", Role::Combinational, "8"),
    ],
    standard_sets: &[&[]],
    check: |_| Ok(()),
    build: |p| Box::new(Widths::new(p)),
    gpu: |_| GpuUse::Standalone,
    localparams: |_| vec![],
    coverage: &[],
    scaling: &[],
    seed_costs: &[],
};

pub const WIDTHS_V: &str = r#"// Width- and sign-sensitive continuous assignments for the mutant-schema test.
module toy_widths (
  input clk, input rst_n, input [3:0] a, input [3:0] b,
  output [3:0] half, output [4:0] sum, output signed [3:0] shr, output [7:0] dec
);
  assign half = (a + 1'b1) >> 1;
  assign sum = a + b + 1'b1;
  assign shr = $signed(b) >>> 1;
  assign dec = {a, b} - 8'd1;
endmodule
"#;

pub struct Widths {
    params: Params,
}

impl Widths {
    pub fn new(p: &Params) -> Widths {
        Widths { params: p.clone() }
    }
}

impl UnitModel for Widths {
    fn desc(&self) -> &'static UnitDesc {
        &WIDTHS_DESC
    }
    fn params(&self) -> &Params {
        &self.params
    }
    fn outputs(&self, p: &mut [Bits]) {
        let (a, b) = (p[1].to_u64(), p[2].to_u64());
        // The context of each right-hand side is its target's width: carries beyond it drop.
        p[3].set_u64(((a + 1) & 0xf) >> 1);
        p[4].set_u64((a + b + 1) & 0x1f);
        p[5].set_u64((((b as i8) << 4 >> 5) as u64) & 0xf);
        p[6].set_u64(((a << 4 | b).wrapping_sub(1)) & 0xff);
    }
    fn tick(&mut self, _: &[Bits]) {}
}

pub fn widths_rtl() -> RtlSource {
    RtlSource::single("toy_widths", WIDTHS_V)
}
