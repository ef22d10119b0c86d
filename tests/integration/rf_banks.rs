//! The register-file bank model (`timing::rf`, keys `sm.rf_banks`, `sm.rf_bank_conflicts`):
//! exact per-bank reads and writes of a hand-written straight-line kernel, totals against
//! the instructions' operands, idle cycles against the SM's cycles, the conflict option, and
//! bad configuration values.

use warpforge_model::config::GpuConfig;
use warpforge_model::gpu::{Gpu, Mode};
use warpforge_model::host::{Dim3, Host, KernelArg};
use warpforge_model::ptx::ir::{AddrBase, Operand};
use warpforge_model::stats::KernelStats;
use warpforge_workloads::Size;

/// Straight line, one instruction per line; per warp, by hand (distinct source registers,
/// predicates not counted / destination registers, predicates not counted):
const KERNEL: &str = r#"
.version 6.0
.target sm_70
.address_size 64

.visible .entry rf(.param .u64 rf_param_0)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<4>;

	ld.param.u64 	%rd1, [rf_param_0];      // 0 reads, 1 write
	cvta.to.global.u64 	%rd2, %rd1;          // 1, 1
	mov.u32 	%r1, %tid.x;                  // 0, 1
	mul.wide.u32 	%rd3, %r1, 4;             // 1, 1
	add.s64 	%rd2, %rd2, %rd3;             // 2, 1
	add.u32 	%r2, %r1, 7;                  // 1, 1
	mad.lo.u32 	%r3, %r1, %r2, %r1;        // 2 (r1 once), 1
	setp.lt.u32 	%p1, %r3, 100;            // 1, 0 (predicate)
	@%p1 add.u32 	%r3, %r3, %r2;            // 2 (guard not counted), 1
	st.global.u32 	[%rd2], %r3;              // 2 (address base and value), 0
	ret;                                    // 0, 0
}
"#;
const READS_PER_WARP: u64 = 12;
const WRITES_PER_WARP: u64 = 8;
const INSTS_PER_WARP: u64 = 11;
/// Instructions with two source registers (add.s64, mad, the guarded add, st): with one
/// bank and conflicts modelled, each waits one extra cycle.
const TWO_SOURCE_INSTS: u64 = 4;

fn cfg(sets: &[&str]) -> GpuConfig {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    GpuConfig::preset("gtx480", &sets).unwrap()
}

/// Run the kernel with `warps` warps in one CTA (on SM 0, warp slots 0..warps). Returns the
/// launch statistics and, per warp-independent source/destination, the register slots of
/// every instruction (from the allocated IR).
fn run_kernel(c: GpuConfig, warps: u32) -> (KernelStats, Vec<Vec<u16>>, Vec<Vec<u16>>) {
    let mut gpu = Gpu::new(c, Mode::Timing);
    let m = gpu.load_module("rf.ptx", KERNEL).unwrap();
    let out = gpu.alloc(4 * 32 * warps as u64).unwrap();
    gpu.launch(
        m,
        "rf",
        Dim3::x(1),
        Dim3::x(32 * warps),
        0,
        &[KernelArg::Ptr(out)],
    )
    .unwrap();
    let module = gpu.module(m).unwrap();
    let k = &module.kernels[0];
    let data = |r: u16| (r as u32) < k.regs_per_thread;
    let mut srcs = Vec::new();
    let mut dsts = Vec::new();
    for i in &k.insts {
        let mut s: Vec<u16> = i
            .srcs
            .iter()
            .filter_map(|o| match o {
                Operand::Reg(r) => Some(*r),
                _ => None,
            })
            .collect();
        if let Some(a) = i.addr {
            if let AddrBase::Reg(r) = a.base {
                s.push(r);
            }
        }
        s.sort();
        s.dedup();
        s.retain(|&r| data(r));
        srcs.push(s);
        dsts.push(
            i.dsts
                .iter()
                .filter_map(|o| match o {
                    Operand::Reg(r) if data(*r) => Some(*r),
                    _ => None,
                })
                .collect(),
        );
    }
    let l = gpu.launches.pop().unwrap();
    (l, srcs, dsts)
}

fn counter(l: &KernelStats, name: &str) -> u64 {
    l.counters
        .get(name)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

#[test]
fn per_bank_reads_and_writes_of_a_straight_line_kernel() {
    let banks = 16u32;
    let warps = 3u32;
    let (l, srcs, dsts) = run_kernel(cfg(&[]), warps);
    // The hand count is the allocated IR's count (allocation does not merge operands).
    let n_src: usize = srcs.iter().map(|s| s.len()).sum();
    let n_dst: usize = dsts.iter().map(|s| s.len()).sum();
    assert_eq!(n_src as u64, READS_PER_WARP);
    assert_eq!(n_dst as u64, WRITES_PER_WARP);
    assert_eq!(l.warp_instructions, INSTS_PER_WARP * warps as u64);
    // Totals: every instruction issued once per warp.
    assert_eq!(counter(&l, "sm0.rf.reads"), READS_PER_WARP * warps as u64);
    assert_eq!(counter(&l, "sm0.rf.writes"), WRITES_PER_WARP * warps as u64);
    assert_eq!(counter(&l, "sm1.rf.reads"), 0);
    assert_eq!(counter(&l, "sm0.rf.conflict_cycles"), 0);
    // Per bank: register r of warp slot w is in bank (r + w) % 16.
    let mut want_r = vec![0u64; banks as usize];
    let mut want_w = vec![0u64; banks as usize];
    for w in 0..warps {
        for s in srcs.iter().flatten() {
            want_r[((*s as u32 + w) % banks) as usize] += 1;
        }
        for d in dsts.iter().flatten() {
            want_w[((*d as u32 + w) % banks) as usize] += 1;
        }
    }
    let cycles = counter(&l, "sm0.cycles");
    for b in 0..banks as usize {
        assert_eq!(
            counter(&l, &format!("sm0.rf.bank{b}.reads")),
            want_r[b],
            "bank {b} reads"
        );
        assert_eq!(
            counter(&l, &format!("sm0.rf.bank{b}.writes")),
            want_w[b],
            "bank {b} writes"
        );
        // Busy cycles = cycles - idle: at least one if accessed, at most one per access.
        let idle = counter(&l, &format!("sm0.rf.bank{b}.idle_cycles"));
        let busy = cycles - idle;
        let acc = want_r[b] + want_w[b];
        assert!(
            busy <= acc && (busy > 0) == (acc > 0),
            "bank {b}: busy {busy}, {acc} accesses"
        );
    }
    // The kernel uses few registers: some of the 16 banks stay idle for the whole launch.
    assert!((0..16).any(|b| counter(&l, &format!("sm0.rf.bank{b}.idle_cycles")) == cycles));
    // An SM without work: every bank idle every cycle.
    assert_eq!(
        counter(&l, "sm1.rf.bank0.idle_cycles"),
        counter(&l, "sm1.cycles")
    );
}

#[test]
fn one_bank_takes_every_access_and_its_busy_cycles_are_bounded() {
    // One warp, one bank: every read and write goes to bank 0. Its busy cycles (the SM's
    // cycles minus its idle cycles) are the distinct cycles with an access: at most one per
    // access, and at least one per instruction with sources (one warp issues at most one
    // instruction per cycle).
    let (l, srcs, _) = run_kernel(cfg(&["sm.rf_banks=1"]), 1);
    assert_eq!(counter(&l, "sm0.rf.bank0.reads"), READS_PER_WARP);
    assert_eq!(counter(&l, "sm0.rf.bank0.writes"), WRITES_PER_WARP);
    let busy = counter(&l, "sm0.cycles") - counter(&l, "sm0.rf.bank0.idle_cycles");
    let issue_cycles_with_reads = srcs.iter().filter(|s| !s.is_empty()).count() as u64;
    assert!(
        (issue_cycles_with_reads..=READS_PER_WARP + WRITES_PER_WARP).contains(&busy),
        "busy {busy}"
    );
}

#[test]
fn bank_conflicts_delay_instructions_with_same_bank_sources() {
    let (off, _, _) = run_kernel(cfg(&["sm.rf_banks=1"]), 2);
    let (on, _, _) = run_kernel(cfg(&["sm.rf_banks=1", "sm.rf_bank_conflicts=true"]), 2);
    assert_eq!(counter(&off, "sm0.rf.conflict_cycles"), 0);
    assert_eq!(
        counter(&on, "sm0.rf.conflict_cycles"),
        2 * TWO_SOURCE_INSTS,
        "one extra cycle per two-source instruction per warp"
    );
    assert!(on.cycles > off.cycles, "{} vs {}", on.cycles, off.cycles);
    // Same work, same counts.
    assert_eq!(counter(&on, "sm0.rf.reads"), counter(&off, "sm0.rf.reads"));
    // With 64 banks the kernel's few registers never share a bank within an instruction.
    let (wide, _, _) = run_kernel(cfg(&["sm.rf_banks=64", "sm.rf_bank_conflicts=true"]), 2);
    assert_eq!(counter(&wide, "sm0.rf.conflict_cycles"), 0);
    let (wide_off, _, _) = run_kernel(cfg(&["sm.rf_banks=64"]), 2);
    assert_eq!(wide.cycles, wide_off.cycles);
}

#[test]
fn a_workload_with_conflicts_is_slower_and_counts_add_up() {
    let run = |sets: &[&str]| {
        let mut gpu = Gpu::new(cfg(sets), Mode::Timing);
        let w = warpforge_workloads::by_name("stencil").unwrap();
        let v = w.run(&mut gpu, Size::Small, 7).unwrap();
        assert!(v.passed, "{}", v.detail);
        gpu
    };
    let off = run(&[]);
    let on = run(&["sm.rf_banks=2", "sm.rf_bank_conflicts=true"]);
    let cyc = |g: &Gpu| g.launches.iter().map(|l| l.cycles).sum::<u64>();
    assert!(cyc(&on) > cyc(&off));
    for l in &off.launches {
        for i in 0..15 {
            let sum = |f: &str| -> u64 {
                (0..16)
                    .map(|b| counter(l, &format!("sm{i}.rf.bank{b}.{f}")))
                    .sum()
            };
            assert_eq!(sum("reads"), counter(l, &format!("sm{i}.rf.reads")));
            assert_eq!(sum("writes"), counter(l, &format!("sm{i}.rf.writes")));
            let cycles = counter(l, &format!("sm{i}.cycles"));
            for b in 0..16 {
                assert!(counter(l, &format!("sm{i}.rf.bank{b}.idle_cycles")) <= cycles);
            }
        }
        assert!(counter(l, "sm0.rf.reads") > 0);
        assert_eq!(counter(l, "sm0.rf.conflict_cycles"), 0);
    }
    assert!(on
        .launches
        .iter()
        .any(|l| counter(l, "sm0.rf.conflict_cycles") > 0));
}

#[test]
fn bad_rf_keys_are_config_errors_naming_the_key() {
    for v in ["0", "3", "128"] {
        let e = GpuConfig::preset("gtx480", &[format!("sm.rf_banks={v}")]).unwrap_err();
        assert!(e.to_string().contains("sm.rf_banks"), "{e}");
    }
    let e = GpuConfig::preset("fx5800", &["sm.rf_bank_conflicts=3".into()]).unwrap_err();
    assert!(e.to_string().contains("rf_bank_conflicts"), "{e}");
    for ok in ["1", "64"] {
        GpuConfig::preset("gtx480", &[format!("sm.rf_banks={ok}")]).unwrap();
    }
}
