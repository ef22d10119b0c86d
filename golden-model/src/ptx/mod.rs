//! PTX front end. (Placeholder: the parser lands next.)
pub mod ir;
