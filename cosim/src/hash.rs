//! A small stable content hash (FNV-1a, 128 bits) for the build cache.
//!
//! `std`'s `DefaultHasher` is not guaranteed stable across Rust releases; a cache key must
//! be, so that a toolchain update does not silently rebuild (or worse, mix) models. The
//! cache is local and not adversarial, so a non-cryptographic 128-bit hash is enough.

const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
const PRIME: u128 = 0x0000000001000000000000000000013B;

#[derive(Clone)]
pub struct ContentHash(u128);

impl Default for ContentHash {
    fn default() -> Self {
        ContentHash(OFFSET)
    }
}

impl ContentHash {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn bytes(&mut self, data: &[u8]) -> &mut Self {
        for &b in data {
            self.0 ^= b as u128;
            self.0 = self.0.wrapping_mul(PRIME);
        }
        self
    }

    /// A length-prefixed field, so that ("ab","c") and ("a","bc") differ.
    pub fn field(&mut self, data: impl AsRef<[u8]>) -> &mut Self {
        let data = data.as_ref();
        self.bytes(&(data.len() as u64).to_le_bytes());
        self.bytes(data)
    }

    pub fn hex(&self) -> String {
        format!("{:032x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_and_field_separated() {
        // FNV-1a 128 of the empty input is the offset basis.
        assert_eq!(ContentHash::new().hex(), "6c62272e07bb014262b821756295c58d");
        let a = ContentHash::new().field("ab").field("c").hex();
        let b = ContentHash::new().field("a").field("bc").hex();
        assert_ne!(a, b);
        assert_eq!(a, ContentHash::new().field("ab").field("c").hex());
    }
}
