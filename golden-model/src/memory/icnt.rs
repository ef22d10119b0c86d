//! SM <-> L2-bank interconnect: a crossbar with a fixed one-way latency and a bandwidth
//! limit per port.
//!
//! Every SM has one output (request) port and one input (reply) port; every L2 bank has one
//! input and one output port. Each port moves `bytes_per_cycle` bytes per icnt cycle, so a
//! packet of `b` bytes occupies a port for `ser(b) = ceil(b / bytes_per_cycle)` cycles.
//! A packet that leaves its source port at cycle `d` (source port busy `[d, d+ser)`)
//! reaches the destination `latency` cycles later and is serialised through the destination
//! port: it starts at `s = max(d + latency, dst_free)` and is delivered at `s + ser`
//! (destination busy `[s, s+ser)`). Delivery times at one destination port are therefore
//! non-decreasing, so in-flight packets can sit in plain FIFOs.
//!
//! The bounded queues (SM injection queue, L2 bank input queue) are owned by the SM and L2
//! models; this module only keeps port availability and the packet formats. The formulas are
//! in icnt cycles; `Crossbar::clocked` makes its times base ticks (`timing::clock`): the
//! latency and each serialisation converted, rounded up (unchanged at the presets).

use super::coalescer::SECTOR_BYTES;

/// Bytes of a request/reply header (address, command, ids).
pub const HEADER_BYTES: u32 = 8;

/// What a request asks L2 to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PacketKind {
    /// L1 fill: reply goes to L1 MSHR `id`.
    #[default]
    Load,
    /// Load that could not get an L1 MSHR (only when one instruction needs more MSHRs than
    /// the table has): not allocated in L1; reply completes transaction of instruction `id`.
    LoadBypass,
    /// Write-through store: no reply.
    Store,
    /// Atomic performed at L2: reply completes transaction of instruction `id`.
    Atomic,
}

/// A request (SM -> L2) and, with the same fields, its reply (L2 -> SM).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Packet {
    pub kind: PacketKind,
    pub sm: u16,
    pub bank: u16,
    pub line_addr: u64,
    /// Sectors requested (loads: fetched; stores/atomics: written).
    pub sectors: u32,
    /// L1 MSHR index (Load) or instruction slot (others).
    pub id: u32,
}

impl Packet {
    fn data_bytes(&self) -> u32 {
        self.sectors.count_ones() * SECTOR_BYTES
    }

    /// Size on the request network: header, plus data for stores and atomics.
    pub fn request_bytes(&self) -> u32 {
        match self.kind {
            PacketKind::Load | PacketKind::LoadBypass => HEADER_BYTES,
            PacketKind::Store | PacketKind::Atomic => HEADER_BYTES + self.data_bytes(),
        }
    }

    /// Size on the reply network: header plus the requested sectors (stores have no reply).
    pub fn reply_bytes(&self) -> u32 {
        HEADER_BYTES + self.data_bytes()
    }
}

#[derive(Debug, Clone)]
pub struct Crossbar {
    /// One-way latency, base ticks.
    latency: u64,
    bytes_per_cycle: u32,
    /// Interconnect and base clock, kHz: port occupancy is counted in icnt cycles and
    /// converted to base ticks (rounded up); equal at the presets, where nothing converts.
    icnt_khz: u64,
    base_khz: u64,
    sm_out_free: Vec<u64>,
    sm_in_free: Vec<u64>,
    bank_in_free: Vec<u64>,
    bank_out_free: Vec<u64>,
}

impl Crossbar {
    pub fn new(sms: usize, banks: usize, latency: u32, bytes_per_cycle: u32) -> Crossbar {
        assert!(bytes_per_cycle > 0);
        Crossbar {
            latency: latency as u64,
            bytes_per_cycle,
            icnt_khz: 1,
            base_khz: 1,
            sm_out_free: vec![0; sms],
            sm_in_free: vec![0; sms],
            bank_in_free: vec![0; banks],
            bank_out_free: vec![0; banks],
        }
    }

    /// The same crossbar clocked at `icnt_khz` against a time base at `base_khz`: the
    /// latency given to `new` (icnt cycles) and every port occupancy become base ticks.
    pub fn clocked(mut self, icnt_khz: u64, base_khz: u64) -> Crossbar {
        self.latency = crate::timing::clock::to_base_ticks(self.latency, icnt_khz, base_khz);
        self.icnt_khz = icnt_khz;
        self.base_khz = base_khz;
        self
    }

    /// Base ticks a packet of `bytes` occupies a port (`ceil(bytes / bytes_per_cycle)` icnt
    /// cycles).
    #[inline]
    pub fn ser(&self, bytes: u32) -> u64 {
        let c = bytes.div_ceil(self.bytes_per_cycle) as u64;
        if self.icnt_khz == self.base_khz {
            c
        } else {
            crate::timing::clock::to_base_ticks(c, self.icnt_khz, self.base_khz)
        }
    }

    fn traverse(&self, now: u64, src: &mut u64, dst: &mut u64, bytes: u32) -> u64 {
        let ser = self.ser(bytes);
        *src = now + ser;
        let start = (now + self.latency).max(*dst);
        *dst = start + ser;
        start + ser
    }

    /// Can SM `sm` start sending a packet this cycle?
    pub fn sm_can_send(&self, now: u64, sm: usize) -> bool {
        self.sm_out_free[sm] <= now
    }

    /// First cycle at which L2 bank `bank` can start sending a reply.
    pub fn bank_free_at(&self, bank: usize) -> u64 {
        self.bank_out_free[bank]
    }

    /// Can L2 bank `bank` start sending a reply this cycle?
    pub fn bank_can_send(&self, now: u64, bank: usize) -> bool {
        self.bank_out_free[bank] <= now
    }

    /// Send a request SM -> bank at `now`; returns the delivery cycle at the bank.
    pub fn send_request(&mut self, now: u64, sm: usize, bank: usize, bytes: u32) -> u64 {
        debug_assert!(self.sm_can_send(now, sm));
        let (mut s, mut d) = (self.sm_out_free[sm], self.bank_in_free[bank]);
        let t = self.traverse(now, &mut s, &mut d, bytes);
        self.sm_out_free[sm] = s;
        self.bank_in_free[bank] = d;
        t
    }

    /// Send a reply bank -> SM at `now`; returns the delivery cycle at the SM.
    pub fn send_reply(&mut self, now: u64, bank: usize, sm: usize, bytes: u32) -> u64 {
        debug_assert!(self.bank_can_send(now, bank));
        let (mut s, mut d) = (self.bank_out_free[bank], self.sm_in_free[sm]);
        let t = self.traverse(now, &mut s, &mut d, bytes);
        self.bank_out_free[bank] = s;
        self.sm_in_free[sm] = d;
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_and_serialisation() {
        let mut x = Crossbar::new(2, 2, 8, 32);
        assert_eq!(x.ser(8), 1);
        assert_eq!(x.ser(136), 5);
        // 8 B request at cycle 10: delivered at 10 + 8 + 1.
        assert_eq!(x.send_request(10, 0, 1, 8), 19);
        assert!(!x.sm_can_send(10, 0) && x.sm_can_send(11, 0));
        // Second SM to the same bank in the same cycle queues behind at the bank port.
        assert_eq!(x.send_request(10, 1, 1, 40), 21);
        // Reply 136 B: source busy 5 cycles, delivered at 30 + 8 + 5.
        assert_eq!(x.send_reply(30, 0, 0, 136), 43);
        assert!(!x.bank_can_send(34, 0) && x.bank_can_send(35, 0));
    }

    #[test]
    fn a_half_speed_icnt_clock_doubles_latency_and_serialisation() {
        let mut x = Crossbar::new(1, 1, 8, 32).clocked(350_000, 700_000);
        assert_eq!(x.ser(136), 10); // 5 icnt cycles
                                    // 8 B request at tick 10: 16 ticks of latency, 2 of serialisation.
        assert_eq!(x.send_request(10, 0, 0, 8), 28);
        assert!(!x.sm_can_send(11, 0) && x.sm_can_send(12, 0));
        // At the base clock nothing converts.
        let x = Crossbar::new(1, 1, 8, 32).clocked(700_000, 700_000);
        assert_eq!(x.ser(136), 5);
    }
}
