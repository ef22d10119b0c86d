//! The storage primitives the units are built on (design.md §5), as the models see them.
//!
//! [`DpRam`] is the model of `rtl-templates/wf_ram_dp.v`, the one RAM of the primitive
//! library: a simple dual-port RAM with **one write port and one read port**, the read
//! either asynchronous (LUT RAM) or registered (block RAM), chosen by a parameter. A unit
//! model that keeps storage in a `DpRam` drives exactly the ports its RTL drives, one
//! [`DpRam::clock`] per clock edge, so the model and the RTL describe the same
//! micro-architecture and the port discipline is checked in both.
//!
//! Why one write port and one read port, not two read/write ports: it is the RAM every
//! target has. iCE40's only RAM (`SB_RAM40_4K`) is 1W+1R; Xilinx and ECP5 LUT RAM
//! (`RAM32M`/`RAM64M`, `TRELLIS_DPR16X4`) has one write port; only their block RAMs are true
//! dual-port. Vortex's `VX_dp_ram` makes the same choice. With a single write port two
//! writes to one address in one cycle cannot be expressed at all (`clock` takes one write).
//!
//! Illegal use is asserted (the RTL has the same checks, simulation-only):
//! - a write or an enabled read outside `0..words`;
//! - registered read only: a read of the address written at the same edge. Block RAMs
//!   disagree on what that returns (old data, new data, or undefined on iCE40), and the RTL
//!   primitive tells Yosys it never happens (`no_rw_check`), so it must not.

use std::fmt;

/// One illegal use of a [`DpRam`] at a clock edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RamMisuse {
    /// A write to an address at or above the number of words.
    WriteOutOfRange { addr: usize, words: usize },
    /// An enabled read of an address at or above the number of words.
    ReadOutOfRange { addr: usize, words: usize },
    /// Registered read: the read port read the address the write port wrote at the same
    /// edge (read-during-write collision).
    ReadDuringWrite { addr: usize },
}

impl fmt::Display for RamMisuse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RamMisuse::WriteOutOfRange { addr, words } => {
                write!(f, "write to address {addr}, out of range 0..{}", words - 1)
            }
            RamMisuse::ReadOutOfRange { addr, words } => {
                write!(f, "read of address {addr}, out of range 0..{}", words - 1)
            }
            RamMisuse::ReadDuringWrite { addr } => write!(
                f,
                "registered read of address {addr} in the cycle it is written (read-during-write)"
            ),
        }
    }
}

/// A 1-write, 1-read RAM of `T` words (the model of `wf_ram_dp`). The contents are not reset
/// (as in the RTL and on every FPGA): a unit reads only words it wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpRam<T> {
    words: Vec<T>,
    /// `RD_REG=1`: the read data is the register `q`, loaded at an edge with the read
    /// enabled; `RD_REG=0`: [`DpRam::read_async`] reads the array directly.
    registered: bool,
    q: T,
}

impl<T: Copy + Default> DpRam<T> {
    /// `words` words (at least one: the RTL primitive has no zero-word form), registered
    /// or asynchronous read.
    pub fn new(words: usize, registered: bool) -> DpRam<T> {
        DpRam {
            words: vec![T::default(); words.max(1)],
            registered,
            q: T::default(),
        }
    }

    pub fn words(&self) -> usize {
        self.words.len()
    }

    pub fn is_registered(&self) -> bool {
        self.registered
    }

    /// The asynchronous read port (`RD_REG=0`): the word at `addr` now.
    #[inline]
    pub fn read_async(&self, addr: usize) -> Result<T, RamMisuse> {
        debug_assert!(!self.registered, "read_async on a registered-read RAM");
        self.words
            .get(addr)
            .copied()
            .ok_or(RamMisuse::ReadOutOfRange {
                addr,
                words: self.words.len(),
            })
    }

    /// The registered read data (`RD_REG=1`): the word read at the last edge whose read was
    /// enabled.
    #[inline]
    pub fn q(&self) -> &T {
        &self.q
    }

    /// One clock edge: the write port writes `write = (addr, data)` and, with a registered
    /// read, the read port loads `q` from `read = addr` (with an asynchronous read, `read`
    /// is only checked: the data was taken with [`DpRam::read_async`] during the cycle).
    /// Nothing changes on a misuse.
    #[inline]
    pub fn clock(
        &mut self,
        write: Option<(usize, T)>,
        read: Option<usize>,
    ) -> Result<(), RamMisuse> {
        let n = self.words.len();
        if let Some((addr, _)) = write {
            if addr >= n {
                return Err(RamMisuse::WriteOutOfRange { addr, words: n });
            }
        }
        if let Some(addr) = read {
            if addr >= n {
                return Err(RamMisuse::ReadOutOfRange { addr, words: n });
            }
            if self.registered && write.is_some_and(|(w, _)| w == addr) {
                return Err(RamMisuse::ReadDuringWrite { addr });
            }
            if self.registered {
                self.q = self.words[addr];
            }
        }
        if let Some((addr, data)) = write {
            self.words[addr] = data;
        }
        Ok(())
    }

    /// The word at `addr` as stored (debug view; no port is used).
    #[inline]
    pub fn peek(&self, addr: usize) -> &T {
        &self.words[addr]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_read_returns_the_word_at_the_next_edge() {
        let mut r = DpRam::<u32>::new(4, true);
        r.clock(Some((2, 7)), None).unwrap();
        assert_eq!(*r.q(), 0);
        r.clock(None, Some(2)).unwrap();
        assert_eq!(*r.q(), 7);
        // The read data holds while the read is not enabled.
        r.clock(Some((2, 9)), None).unwrap();
        assert_eq!((*r.q(), *r.peek(2)), (7, 9));
    }

    #[test]
    fn asynchronous_read_sees_the_last_write() {
        let mut r = DpRam::<u32>::new(3, false);
        r.clock(Some((1, 5)), None).unwrap();
        assert_eq!(r.read_async(1), Ok(5));
        // A write and an (asynchronous) read of one address at one edge is legal.
        r.clock(Some((1, 6)), Some(1)).unwrap();
        assert_eq!(r.read_async(1), Ok(6));
    }

    #[test]
    fn misuse_is_reported_and_changes_nothing() {
        let mut r = DpRam::<u32>::new(3, true);
        assert_eq!(
            r.clock(Some((3, 1)), None),
            Err(RamMisuse::WriteOutOfRange { addr: 3, words: 3 })
        );
        assert_eq!(
            r.clock(None, Some(5)),
            Err(RamMisuse::ReadOutOfRange { addr: 5, words: 3 })
        );
        assert_eq!(
            r.clock(Some((1, 4)), Some(1)),
            Err(RamMisuse::ReadDuringWrite { addr: 1 })
        );
        assert_eq!(*r.peek(1), 0);
        assert!(RamMisuse::ReadDuringWrite { addr: 1 }
            .to_string()
            .contains("read-during-write"));
        // As the RTL's check says it: the last address, inclusive.
        assert_eq!(
            RamMisuse::WriteOutOfRange { addr: 7, words: 7 }.to_string(),
            "write to address 7, out of range 0..6"
        );
        let a = DpRam::<u32>::new(3, false);
        assert!(a.read_async(3).is_err());
    }
}
