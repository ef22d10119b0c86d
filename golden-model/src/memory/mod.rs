//! Memory hierarchy timing model. (Placeholder: lands next.)
