//! Field layouts of wide ports: how a flattened vector (a whole stack in `dbg_stack`, the
//! scoreboard's pending bits in `dbg_P`, a packed array of port fields such as `rsv_reg`)
//! is organised, declared once with the port in `declare_unit!` and used to name the bits
//! that differ in a divergence report (`dbg_stack entry 3 .rpc`) and the elements of an
//! input in the input listing (`rsv_reg[1]`).
//!
//! A layout is a number of repeated **elements**, indexed by one or more dimensions
//! (outermost first, row-major: with dimensions `warp` (`NUM_WARPS`) and `side` (2), element
//! `warp*2 + side`), each made of **fields** laid out LSB first. Element `k` occupies bits
//! `[k*EW, (k+1)*EW)` where `EW` is the sum of the field widths. Counts and widths are
//! width expressions over the unit's parameters ([`super::contract::eval_width`]), so the
//! layout follows the parameters like the port's own width does; every declared unit's
//! layouts are checked to cover exactly their port's width at every standard parameter set.
//!
//! Names: a dimension named `_` is shown as an index (`rsv_reg[1]`), a named one as
//! `name i` (`entry 3`, `warp 5 side 1`); a field named `_` (the element is one value) is
//! not shown, a named one as `.name` (`.rpc`).

use super::contract::{eval_width, Bits, Params};

/// One dimension of repeated elements: its index name (`""`: shown as `[i]`) and its count
/// (a width expression).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim {
    pub name: &'static str,
    pub count: &'static str,
}

/// One field of an element: its name (`""`: the element is this one value) and its width
/// (a width expression).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub width: &'static str,
}

/// The declared organisation of a port's bits (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Outermost first; the last dimension varies fastest.
    pub dims: &'static [Dim],
    /// LSB first.
    pub fields: &'static [Field],
}

impl Layout {
    /// The layout at concrete parameters.
    pub fn at(&self, params: &Params) -> Result<LayoutAt, String> {
        let dims = self
            .dims
            .iter()
            .map(|d| Ok((d.name, eval_width(d.count, params)?)))
            .collect::<Result<Vec<_>, String>>()?;
        let mut fields = vec![];
        let mut lsb = 0u32;
        for f in self.fields {
            let w = eval_width(f.width, params)?;
            fields.push((f.name, lsb, w));
            lsb = lsb
                .checked_add(w)
                .ok_or_else(|| "element width overflows".to_string())?;
        }
        Ok(LayoutAt {
            dims,
            fields,
            element_width: lsb,
        })
    }
}

/// A [`Layout`] with its counts and widths evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutAt {
    /// (name, count), outermost first.
    dims: Vec<(&'static str, u32)>,
    /// (name, lsb within the element, width), LSB first.
    fields: Vec<(&'static str, u32, u32)>,
    element_width: u32,
}

/// One field that differs between two values of a port with a layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDiff {
    /// The field's name after the port's: `" entry 3 .rpc"`, `"[1]"`, `" warp 5 side 1"`
    /// (prefix it with the port name).
    pub path: String,
    /// Bit offset of the field in the port.
    pub lsb: u32,
    pub expected: Bits,
    pub actual: Bits,
}

impl LayoutAt {
    /// Number of elements (the product of the dimension counts).
    pub fn elements(&self) -> u64 {
        self.dims.iter().map(|&(_, n)| n as u64).product()
    }

    /// Bits of one element.
    pub fn element_width(&self) -> u32 {
        self.element_width
    }

    /// The dimensions, outermost first: (index name, `""` for a plain index; count).
    pub fn dims(&self) -> &[(&'static str, u32)] {
        &self.dims
    }

    /// The fields of one element, LSB first: (name, `""` for the whole element; lsb within
    /// the element; width).
    pub fn fields(&self) -> &[(&'static str, u32, u32)] {
        &self.fields
    }

    /// Bits the layout covers (elements × element width): the port's width.
    pub fn width(&self) -> u64 {
        self.elements() * self.element_width as u64
    }

    /// The name of field `field` of element `element`, to append to the port name.
    pub fn path(&self, element: u64, field: usize) -> String {
        let mut idx = vec![0u64; self.dims.len()];
        let mut k = element;
        for (slot, &(_, n)) in idx.iter_mut().zip(&self.dims).rev() {
            let n = (n as u64).max(1);
            *slot = k % n;
            k /= n;
        }
        let mut s = String::new();
        for (&(name, _), i) in self.dims.iter().zip(idx) {
            if name.is_empty() {
                s.push_str(&format!("[{i}]"));
            } else {
                s.push_str(&format!(" {name} {i}"));
            }
        }
        let name = self.fields[field].0;
        if !name.is_empty() {
            s.push_str(&format!(" .{name}"));
        }
        s
    }

    /// The element and field bit `bit` of the port belongs to (`None` past the layout).
    pub fn locate(&self, bit: u32) -> Option<(u64, usize)> {
        if self.element_width == 0 || bit as u64 >= self.width() {
            return None;
        }
        let element = (bit / self.element_width) as u64;
        let within = bit % self.element_width;
        let field = self
            .fields
            .iter()
            .position(|&(_, lsb, w)| within >= lsb && within < lsb + w)?;
        Some((element, field))
    }

    /// Bit offset and width of field `field` of element `element` in the port.
    pub fn span(&self, element: u64, field: usize) -> (u32, u32) {
        let (_, lsb, w) = self.fields[field];
        ((element * self.element_width as u64) as u32 + lsb, w)
    }

    /// Every field whose bits differ between `expected` and `actual` (bit positions
    /// `diff_bits`, ascending, as [`Bits::diff_bits`] gives them), in bit order; at most
    /// `limit`, and how many more there are.
    pub fn diff(
        &self,
        expected: &Bits,
        actual: &Bits,
        diff_bits: &[u32],
        limit: usize,
    ) -> (Vec<FieldDiff>, usize) {
        let mut out = vec![];
        let mut more = 0;
        let mut last = None;
        for &b in diff_bits {
            let Some(at) = self.locate(b) else { continue };
            if last == Some(at) {
                continue;
            }
            last = Some(at);
            if out.len() == limit {
                more += 1;
                continue;
            }
            let (lsb, w) = self.span(at.0, at.1);
            out.push(FieldDiff {
                path: self.path(at.0, at.1),
                lsb,
                expected: expected.slice(lsb, w),
                actual: actual.slice(lsb, w),
            });
        }
        (out, more)
    }

    /// Every field of every element of `value`, in bit order: (path, value).
    pub fn split(&self, value: &Bits) -> Vec<(String, Bits)> {
        let mut out = vec![];
        for e in 0..self.elements() {
            for f in 0..self.fields.len() {
                let (lsb, w) = self.span(e, f);
                out.push((self.path(e, f), value.slice(lsb, w)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::contract::{ParamSpec, Params};

    const P: &[ParamSpec] = &[
        ParamSpec {
            name: "N",
            default: 3,
            min: 1,
            max: 8,
            doc: "",
        },
        ParamSpec {
            name: "W",
            default: 5,
            min: 1,
            max: 70,
            doc: "",
        },
    ];

    const STACK: Layout = Layout {
        dims: &[Dim {
            name: "entry",
            count: "N",
        }],
        fields: &[
            Field {
                name: "mask",
                width: "W",
            },
            Field {
                name: "pc",
                width: "8",
            },
        ],
    };

    const GRID: Layout = Layout {
        dims: &[
            Dim {
                name: "warp",
                count: "N",
            },
            Dim {
                name: "side",
                count: "2",
            },
            Dim {
                name: "",
                count: "W",
            },
        ],
        fields: &[Field {
            name: "",
            width: "1",
        }],
    };

    /// Every layout a unit declares covers exactly its port's width at every standard
    /// parameter set (a layout and its port are two expressions over the same parameters).
    #[test]
    fn every_declared_layout_covers_its_port_at_every_standard_set() {
        let mut checked = 0;
        for desc in crate::units::ALL {
            for params in desc.standard_params() {
                let widths = desc.widths(&params);
                for (port, &w) in desc.ports.iter().zip(&widths) {
                    let Some(layout) = port.layout else { continue };
                    let at = layout
                        .at(&params)
                        .unwrap_or_else(|e| panic!("{} {} ({params}): {e}", desc.name, port.name));
                    assert_eq!(
                        at.width(),
                        w as u64,
                        "{} port {} ({params}): the layout covers {} bits, the port has {w}",
                        desc.name,
                        port.name,
                        at.width()
                    );
                    assert!(at.elements() >= 1 && at.element_width() >= 1);
                    checked += 1;
                }
            }
        }
        // Both stacks' dbg_stack and the scoreboard's port arrays and debug rows, at 4 sets.
        assert!(checked >= 4 * (1 + 1 + 10), "{checked} layouts checked");
    }

    #[test]
    fn names_and_widths_follow_the_parameters() {
        let p = Params::defaults(P);
        let s = STACK.at(&p).unwrap();
        assert_eq!((s.elements(), s.element_width(), s.width()), (3, 13, 39));
        assert_eq!(s.path(2, 1), " entry 2 .pc");
        assert_eq!(s.locate(13 + 5), Some((1, 1)));
        assert_eq!(s.locate(39), None);
        let g = GRID.at(&p).unwrap();
        assert_eq!(g.width(), 3 * 2 * 5);
        // Row-major, the last dimension fastest: bit (warp*2 + side)*W + reg.
        assert_eq!(g.path((2 * 2 + 1) * 5 + 3, 0), " warp 2 side 1[3]");
        assert!(Layout {
            dims: &[Dim {
                name: "x",
                count: "NOPE"
            }],
            fields: &[]
        }
        .at(&p)
        .is_err());
    }

    #[test]
    fn diff_names_each_differing_field_once_with_its_values() {
        let p = Params::defaults(P);
        let s = STACK.at(&p).unwrap();
        let mut a = Bits::zero(39);
        let mut b = Bits::zero(39);
        // entry 1 .pc = 0x14 vs 0x10; entry 2 .mask bits 0 and 4.
        a.set_field(13 + 5, 8, 0x14);
        b.set_field(13 + 5, 8, 0x10);
        b.set_field(26, 5, 0b10001);
        let bits = a.diff_bits(&b);
        let (d, more) = s.diff(&a, &b, &bits, 10);
        assert_eq!(more, 0);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].path, " entry 1 .pc");
        assert_eq!(
            (d[0].expected.to_hex(), d[0].actual.to_hex()),
            ("14".into(), "10".into())
        );
        assert_eq!(d[0].lsb, 18);
        assert_eq!(d[1].path, " entry 2 .mask");
        assert_eq!(d[1].actual.to_u64(), 0b10001);
        let (d, more) = s.diff(&a, &b, &bits, 1);
        assert_eq!((d.len(), more), (1, 1));
        let parts = s.split(&b);
        assert_eq!(parts.len(), 6);
        assert_eq!(
            parts[3],
            (" entry 1 .pc".to_string(), Bits::from_u64(8, 0x10))
        );
    }

    #[test]
    fn wide_fields_are_sliced_whole() {
        let l = Layout {
            dims: &[Dim {
                name: "",
                count: "2",
            }],
            fields: &[Field {
                name: "",
                width: "W",
            }],
        };
        // W = 70: the fields cross a 64-bit word boundary.
        let p70 = Params::defaults(&[
            P[0],
            ParamSpec {
                default: 70,
                ..P[1]
            },
        ]);
        let at = l.at(&p70).unwrap();
        let mut v = Bits::zero(140);
        v.set_bit(70 + 69, true);
        v.set_bit(70, true);
        let parts = at.split(&v);
        assert_eq!(parts[1].0, "[1]");
        assert_eq!(parts[1].1.diff_bits(&Bits::zero(70)), vec![0, 69]);
    }
}
