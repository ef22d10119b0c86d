//! Workloads. (Placeholder.)
