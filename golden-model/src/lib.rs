//! warpforge-model: the golden model of a SIMT GPU.
//!
//! - [`ptx`]: PTX front end (parser, CFG and immediate post-dominators, register allocation).
//! - [`exec`]: bit-exact functional semantics of one warp instruction.
//! - [`units`]: cycle-exact models of the hardware units (the RTL's reference).
//! - [`memory`]: the timing model of the memory hierarchy (coalescer, caches, network, DRAM).
//! - [`timing`]: the SM timing model (dispatcher, schedulers, scoreboard, pipelines).
//! - [`gpu`]: the whole GPU, implementing the [`host::Host`] API in functional or timing mode.
//! - [`hooks`]: the hook points where units that observe the timing model attach.

pub mod address_map;
pub mod config;
pub mod config_limits;
pub mod counters;
pub mod error;
pub mod exec;
pub mod gpu;
pub mod hooks;
pub mod host;
pub mod memory;
pub mod ptx;
pub mod stats;
pub mod timing;
pub mod units;
