//! Device global memory. (Placeholder: lands next.)
/// Device memory with an allocation table for bounds checks.
#[derive(Debug, Default)]
pub struct GlobalMemory {}
