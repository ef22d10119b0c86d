//! Lint gate (TODO)
