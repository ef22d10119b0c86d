//! Synthesis (TODO)
