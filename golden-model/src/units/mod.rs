//! Cycle-exact hardware units (the reference the generated RTL is compared against).
pub mod simt_stack;
