//! warpforge's CUDA runtime (`libwarpforge_cuda.so`): the CUDA runtime API and the
//! registration entry points clang emits, implemented on ONE persistent simulated GPU of the
//! golden model. A CUDA program compiled by `warpforge cc` links against it and runs
//! unmodified: its kernels (the PTX clang embedded as the "fat binary") run on the model,
//! its device memory lives in the model's address space, and launches run in order, each to
//! completion (caches and DRAM state stay warm between launches).
//!
//! Configuration, from the environment when the program starts:
//! - `WARPFORGE_CONFIG`: a preset name (default `gtx480`) or a TOML configuration file;
//! - `WARPFORGE_SET`: comma-separated `key=value` overrides (as `warpforge run --set`);
//! - `WARPFORGE_FUNCTIONAL=1`: functional mode (no timing);
//! - `WARPFORGE_STATS=file.json`: every launch's statistics as JSON at exit;
//! - `WARPFORGE_QUIET=1`: no per-kernel summary on stderr at exit;
//! - `WARPFORGE_RECORD_UNIT=U` and `WARPFORGE_TRACE=file`: the port trace of every instance
//!   of hardware unit U, written at exit for `warpforge cosim --trace file`.
//!
//! Device `printf` output is written to stdout after each launch (the program's own buffered
//! stdio output first), in the model's documented order; texture references are registered
//! and bound (`cudaBindTexture`) for `tex1Dfetch`.
//!
//! A guest fault (out-of-bounds access, barrier deadlock, watchdog...) prints the model's
//! fault report and ends the program with status 1; a PTX module the front end rejects ends
//! it with status 2 when it is registered.

mod api;
mod props;
mod state;

pub use state::EXIT_FAULT;
