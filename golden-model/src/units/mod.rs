//! Cycle-exact hardware units.
