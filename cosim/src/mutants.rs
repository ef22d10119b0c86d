//! Mutants (todo)
