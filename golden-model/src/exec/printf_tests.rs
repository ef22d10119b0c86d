use super::*;

/// Guest memory for the tests: one mapped range `[base, base + bytes.len())`.
struct Mem {
    base: u64,
    bytes: Vec<u8>,
}

impl GuestRead for Mem {
    fn read(&mut self, addr: u64, out: &mut [u8]) -> Result<(), String> {
        let off = addr.checked_sub(self.base).ok_or("below the mapping")? as usize;
        let src = self
            .bytes
            .get(off..off + out.len())
            .ok_or_else(|| format!("{addr:#x} is not mapped"))?;
        out.copy_from_slice(src);
        Ok(())
    }
}

const BASE: u64 = 0x1000;

/// A guest image: the format string at BASE, the arguments (packed by `Args`) at BASE +
/// 0x400, extra strings from BASE + 0x800.
struct Image {
    mem: Mem,
    args: Vec<u8>,
    strings: usize,
}

impl Image {
    fn new(fmt: &str) -> Image {
        let mut bytes = vec![0u8; 0x1000];
        bytes[..fmt.len()].copy_from_slice(fmt.as_bytes());
        Image {
            mem: Mem { base: BASE, bytes },
            args: Vec::new(),
            strings: 0x800,
        }
    }
    /// Append an argument of `size` bytes at its alignment, as clang packs them.
    fn arg(mut self, size: usize, v: u64) -> Image {
        while !self.args.len().is_multiple_of(size) {
            self.args.push(0xee);
        }
        self.args.extend_from_slice(&v.to_le_bytes()[..size]);
        self
    }
    fn int(self, v: i32) -> Image {
        self.arg(4, v as u32 as u64)
    }
    fn long(self, v: i64) -> Image {
        self.arg(8, v as u64)
    }
    fn dbl(self, v: f64) -> Image {
        self.arg(8, v.to_bits())
    }
    /// A NUL-terminated string in guest memory, passed as a pointer argument.
    fn str(mut self, s: &str) -> Image {
        let at = self.strings;
        self.mem.bytes[at..at + s.len()].copy_from_slice(s.as_bytes());
        self.mem.bytes[at + s.len()] = 0;
        self.strings += s.len() + 1;
        self.arg(8, BASE + at as u64)
    }
    fn run(mut self) -> Result<Formatted, String> {
        let n = self.args.len();
        self.mem.bytes[0x400..0x400 + n].copy_from_slice(&self.args);
        vprintf(&mut self.mem, BASE, BASE + 0x400, 1 << 20)
    }
    fn text(self) -> String {
        String::from_utf8(self.run().expect("formats").text).expect("utf-8")
    }
}

fn fmt(f: &str) -> Image {
    Image::new(f)
}

#[test]
fn integers_with_flags_width_and_precision() {
    assert_eq!(
        fmt("%d|%i|%u").int(-42).int(7).int(-1).text(),
        "-42|7|4294967295"
    );
    assert_eq!(
        fmt("[%5d][%-5d][%05d]").int(42).int(42).int(-42).text(),
        "[   42][42   ][-0042]"
    );
    assert_eq!(
        fmt("[%+d][% d][%.3d][%8.3d]")
            .int(5)
            .int(5)
            .int(5)
            .int(-5)
            .text(),
        "[+5][ 5][005][    -005]"
    );
    assert_eq!(
        fmt("%x %X %#x %#X %o %#o")
            .int(255)
            .int(255)
            .int(255)
            .int(0)
            .int(8)
            .int(8)
            .text(),
        "ff FF 0xff 0 10 010"
    );
    assert_eq!(
        fmt("[%.0d][%.0x][%#.0o]").int(0).int(0).int(0).text(),
        "[][][0]"
    );
    assert_eq!(
        fmt("%c%c%5c|%-3c|")
            .int('h' as i32)
            .int('i' as i32)
            .int('x' as i32)
            .int('y' as i32)
            .text(),
        "hi    x|y  |"
    );
    assert_eq!(fmt("%%|%5%|").text(), "%|%|");
}

#[test]
fn length_modifiers_read_eight_bytes_and_truncate() {
    assert_eq!(
        fmt("%ld %lld %lu %llu")
            .long(-1)
            .long(i64::MIN)
            .long(-1)
            .long(1 << 40)
            .text(),
        "-1 -9223372036854775808 18446744073709551615 1099511627776"
    );
    assert_eq!(
        fmt("%lx %llX %zu")
            .long(0xdead_beef_cafe)
            .long(-1)
            .long(12)
            .text(),
        "deadbeefcafe FFFFFFFFFFFFFFFF 12"
    );
    assert_eq!(
        fmt("%hhd %hd %hhu %hu")
            .int(0x1ff)
            .int(0x18000)
            .int(-1)
            .int(-1)
            .text(),
        "-1 -32768 255 65535"
    );
}

#[test]
fn arguments_are_aligned_to_their_size() {
    // int at 0, double at 8 (4 bytes of padding), int at 16, long long at 24.
    let img = fmt("%d %f %d %lld").int(1).dbl(2.5).int(3).long(4);
    assert_eq!(img.args.len(), 32);
    assert_eq!(img.text(), "1 2.500000 3 4");
    // The return value is the number of arguments parsed (CUDA's definition).
    let r = fmt("%d %f %d %lld")
        .int(1)
        .dbl(2.5)
        .int(3)
        .long(4)
        .run()
        .unwrap();
    assert_eq!(r.ret, 4);
    assert_eq!(fmt("no args\n").run().unwrap().ret, 0);
    assert_eq!(
        fmt("%*d|%-*.*f|")
            .int(6)
            .int(42)
            .int(9)
            .int(2)
            .dbl(3.25159)
            .text(),
        "    42|3.25     |"
    );
    assert_eq!(fmt("%*d|").int(-4).int(7).text(), "7   |");
}

#[test]
fn floats() {
    assert_eq!(
        fmt("%f %.2f %10.3f %-10.1f|")
            .dbl(1.0)
            .dbl(2.675)
            .dbl(-3.25159)
            .dbl(0.05)
            .text(),
        "1.000000 2.67     -3.252 0.1       |"
    );
    assert_eq!(
        fmt("%e %.2E %e %.0e")
            .dbl(12345.678)
            .dbl(0.000123)
            .dbl(0.0)
            .dbl(5e300)
            .text(),
        "1.234568e+04 1.23E-04 0.000000e+00 5e+300"
    );
    assert_eq!(
        fmt("%g %g %g %g %G %#g")
            .dbl(100000.0)
            .dbl(1e6)
            .dbl(0.0001)
            .dbl(0.00001)
            .dbl(1.5e-10)
            .dbl(1.0)
            .text(),
        "100000 1e+06 0.0001 1e-05 1.5E-10 1.00000"
    );
    assert_eq!(
        fmt("%f %F %e %g %5.1f|%-6f|%+f")
            .dbl(f64::INFINITY)
            .dbl(f64::NEG_INFINITY)
            .dbl(f64::NAN)
            .dbl(-f64::NAN)
            .dbl(f64::INFINITY)
            .dbl(f64::NAN)
            .dbl(f64::INFINITY)
            .text(),
        "inf -INF nan -nan   inf|nan   |+inf"
    );
    assert_eq!(
        fmt("%a %A %.1a %a %a")
            .dbl(1.0)
            .dbl(-3.5)
            .dbl(1.96875)
            .dbl(0.0)
            .dbl(f64::from_bits(1))
            .text(),
        "0x1p+0 -0X1.CP+1 0x2.0p+0 0x0p+0 0x0.0000000000001p-1022"
    );
    assert_eq!(
        fmt("%08.2f|%+08d|%-08d|").dbl(-1.5).int(3).int(3).text(),
        "-0001.50|+0000003|3       |"
    );
}

#[test]
fn strings_and_pointers_from_guest_memory() {
    assert_eq!(
        fmt("[%s][%8s][%-8s][%.3s]")
            .str("abc")
            .str("abc")
            .str("abc")
            .str("abcdef")
            .text(),
        "[abc][     abc][abc     ][abc]"
    );
    assert_eq!(fmt("%s|%.3s|").long(0).long(0).text(), "(null)||");
    assert_eq!(
        fmt("%p %p %18p")
            .long(0x1000_0040)
            .long(0)
            .long(0xabc)
            .text(),
        "0x10000040 (nil)              0xabc"
    );
}

#[test]
fn malformed_formats_print_as_they_stand() {
    assert_eq!(fmt("100%").text(), "100%");
    assert_eq!(fmt("%5").text(), "%5");
    assert_eq!(fmt("%y %d %ll").int(3).text(), "%y 3 %ll");
    assert_eq!(fmt("%k%Q").run().unwrap().ret, 0);
    // %n consumes its pointer and writes nothing.
    assert_eq!(fmt("a%nb%d").long(BASE as i64).int(9).text(), "ab9");
    // A huge width is capped, not allocated.
    let t = fmt("%99999999999d").int(1).text();
    assert_eq!(t.len(), MAX_FIELD);
}

#[test]
fn bad_pointers_are_errors_not_panics() {
    // %s at unmapped memory.
    let e = fmt("%s").long(0x9999_0000).run().unwrap_err();
    assert!(
        e.contains("%s string of argument 1") && e.contains("0x99990000"),
        "{e}"
    );
    // A string that runs off the end of the mapping.
    let mut img = fmt("%s");
    img.mem.bytes[0xff0..].fill(b'x');
    let e = img.long((BASE + 0xff0) as i64).run().unwrap_err();
    assert!(e.contains("byte 16"), "{e}");
    // The argument buffer itself unmapped.
    let mut m = Mem {
        base: BASE,
        bytes: b"%d %d\0".to_vec(),
    };
    let e = vprintf(&mut m, BASE, 0x50, 100).unwrap_err();
    assert!(e.contains("argument 1"), "{e}");
    // The format string unmapped; a null one returns -1.
    assert!(vprintf(&mut m, 0x77, 0, 100)
        .unwrap_err()
        .contains("format string"));
    assert_eq!(vprintf(&mut m, 0, 0, 100).unwrap().ret, -1);
}

#[test]
fn output_is_bounded_by_max_len() {
    let mut m = Mem {
        base: BASE,
        bytes: vec![0; 64],
    };
    m.bytes[..12].copy_from_slice(b"%1000d%1000d");
    let r = vprintf(&mut m, BASE, BASE + 32, 10).unwrap();
    // Formatting stops after the first field that passes the limit.
    assert_eq!(r.text.len(), 1000);
}

extern "C" {
    fn snprintf(buf: *mut u8, n: usize, fmt: *const u8, ...) -> i32;
}

/// The host C library's `snprintf` of one double.
fn c_double(f: &str, v: f64) -> String {
    let mut buf = vec![0u8; 512];
    let cf = std::ffi::CString::new(f).unwrap();
    // SAFETY: a NUL-terminated format with exactly one double conversion, a 512-byte buffer.
    let n = unsafe { snprintf(buf.as_mut_ptr(), buf.len(), cf.as_ptr() as *const u8, v) };
    buf.truncate(n as usize);
    String::from_utf8(buf).unwrap()
}

fn c_long(f: &str, v: i64) -> String {
    let mut buf = vec![0u8; 512];
    let cf = std::ffi::CString::new(f).unwrap();
    // SAFETY: a NUL-terminated format with exactly one 64-bit integer conversion.
    let n = unsafe { snprintf(buf.as_mut_ptr(), buf.len(), cf.as_ptr() as *const u8, v) };
    buf.truncate(n as usize);
    String::from_utf8(buf).unwrap()
}

/// Every float conversion, with flags, widths and precisions, on values chosen to round at
/// ties and change exponent, against the host's glibc.
#[test]
fn floats_match_the_host_c_library() {
    let values = [
        0.0,
        -0.0,
        1.0,
        0.5,
        1.5,
        2.5,
        0.125,
        0.375,
        9.5,
        99.5,
        999.9999,
        1e-5,
        1.25e-5,
        123456.5,
        1e15,
        1.7976931348623157e308,
        5e-324,
        2.2250738585072014e-308,
        0.1,
        1.0 / 3.0,
        -2.675,
        1e21,
        6.02214076e23,
        9.999995,
        0.00009999995,
        1.96875,
        255.0 / 256.0,
    ];
    let convs = ["f", "e", "g", "a", "E", "G", "A"];
    let specs = [
        "", ".0", ".1", ".3", ".10", "#", "#.0", "+12.4", "-12", "012.2", " .5", "#.3",
    ];
    let mut bad = Vec::new();
    for &v in &values {
        for c in convs {
            for s in specs {
                let f = format!("%{s}{c}");
                // glibc prints `%#.3g` of 999.9999 as `1.e+03`, dropping the zeros `#` keeps
                // (C11 7.21.6.1: `1.00e+03`); the model follows the standard.
                if v == 999.9999 && s == "#.3" && (c == "g" || c == "G") {
                    continue;
                }
                let want = c_double(&f, v);
                let got = fmt(&f).dbl(v).text();
                if got != want {
                    bad.push(format!("{f} of {v:e}: {got:?} vs C {want:?}"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn integers_match_the_host_c_library() {
    let values = [
        0i64,
        1,
        -1,
        7,
        -42,
        255,
        65535,
        i32::MAX as i64,
        i32::MIN as i64,
        i64::MAX,
        i64::MIN,
        0x1234_5678_9abc,
    ];
    let convs = ["lld", "lli", "llu", "llx", "llX", "llo"];
    let specs = [
        "", "5", "-5", "05", ".0", ".4", "#", "#8.3", "+", " ", "+08", "#o",
    ];
    let mut bad = Vec::new();
    for &v in &values {
        for c in convs {
            for s in specs {
                if s == "#o" {
                    continue;
                }
                let f = format!("%{s}{c}");
                let want = c_long(&f, v);
                let got = fmt(&f).long(v).text();
                if got != want {
                    bad.push(format!("{f} of {v}: {got:?} vs C {want:?}"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn fifo_orders_by_launch_warp_call_lane_and_drops_the_last() {
    let mut f = PrintfFifo::default();
    f.push(3, 0, 1, b"w3c0l1\n".to_vec());
    f.push(0, 1, 0, b"w0c1l0\n".to_vec());
    f.push(3, 0, 0, b"w3c0l0\n".to_vec());
    f.push(0, 0, 5, b"w0c0l5\n".to_vec());
    let out = f.take();
    assert_eq!(
        String::from_utf8(out.text).unwrap(),
        "w0c0l5\nw0c1l0\nw3c0l0\nw3c0l1\n"
    );
    assert_eq!(out.dropped, 0);
    assert!(f.is_empty());
    f.set_limit(14);
    f.push(2, 0, 0, b"c\n".to_vec());
    f.push(1, 0, 0, b"bbbbbb\n".to_vec());
    f.push(0, 0, 0, b"aaaaaa\n".to_vec());
    // 16 bytes: the record last in print order goes, whenever it arrived.
    let out = f.take();
    assert_eq!(String::from_utf8(out.text).unwrap(), "aaaaaa\nbbbbbb\n");
    assert_eq!(out.dropped, 1);
    // A later launch prints after an earlier one.
    f.set_limit(100);
    f.next_launch();
    f.push(0, 0, 0, b"second\n".to_vec());
    f.launch -= 1;
    f.push(9, 0, 0, b"first\n".to_vec());
    assert_eq!(String::from_utf8(f.take().text).unwrap(), "first\nsecond\n");
}
