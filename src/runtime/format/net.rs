//! `ntop()` and `macaddr()` text, as bpftrace prints them (glibc's `inet_ntop` and
//! `%02X:…`).
//!
//! Input: address bytes in network order, as they sit in kernel memory.
//! Output: `127.0.0.1`, `2001:db8::ff00:42:8329` (RFC 5952 compression, glibc's choice for
//! embedded IPv4: `::ffff:1.2.3.4` and `::1.2.3.4`), `01:02:03:AA:BB:CC`.
//! Invariant: any byte slice is accepted; short input is zero-padded, long input cut.

/// `AF_INET` as the kernel numbers it.
pub const AF_INET: u64 = 2;
/// `AF_INET6` as the kernel numbers it.
pub const AF_INET6: u64 = 10;

fn padded<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    let n = bytes.len().min(N);
    a[..n].copy_from_slice(&bytes[..n]);
    a
}

/// An IPv4 address from its 4 network-order bytes.
pub fn ipv4_text(bytes: &[u8]) -> String {
    let a: [u8; 4] = padded(bytes);
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// `ntop(n)` for an integer: the integer's in-memory (little-endian) bytes as IPv4.
pub fn ipv4_from_int(n: u32) -> String {
    ipv4_text(&n.to_le_bytes())
}

/// An IPv6 address from its 16 network-order bytes, as glibc's `inet_ntop` writes it.
pub fn ipv6_text(bytes: &[u8]) -> String {
    let a: [u8; 16] = padded(bytes);
    let w: Vec<u16> = a
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    // Longest run of zero words, length >= 2, first one on ties.
    let (mut best, mut best_len) = (usize::MAX, 0);
    let mut i = 0;
    while i < 8 {
        if w[i] == 0 {
            let start = i;
            while i < 8 && w[i] == 0 {
                i += 1;
            }
            if i - start > best_len {
                best = start;
                best_len = i - start;
            }
        } else {
            i += 1;
        }
    }
    if best_len < 2 {
        best = usize::MAX;
    }
    let mut out = String::new();
    let mut i = 0;
    while i < 8 {
        if i == best {
            out.push_str("::");
            i += best_len;
            if i == 8 {
                return out;
            }
            continue;
        }
        if i > 0 && !out.ends_with(':') {
            out.push(':');
        }
        if i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)) {
            out.push_str(&ipv4_text(&a[12..]));
            return out;
        }
        out.push_str(&format!("{:x}", w[i]));
        i += 1;
    }
    out
}

/// `ntop(af, addr)`: IPv4 for `AF_INET`, IPv6 otherwise (bpftrace's choice for any other af).
pub fn ntop(af: u64, bytes: &[u8]) -> String {
    if af == AF_INET {
        ipv4_text(bytes)
    } else {
        ipv6_text(bytes)
    }
}

/// `macaddr()`: six upper-case hex bytes separated by colons.
pub fn macaddr_text(bytes: &[u8]) -> String {
    let a: [u8; 6] = padded(bytes);
    format!(
        "{:02X}:{:02X}:{:02X}:{:02X}:{:02X}:{:02X}",
        a[0], a[1], a[2], a[3], a[4], a[5]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv6Addr;

    fn v6(s: &str) -> String {
        ipv6_text(&s.parse::<Ipv6Addr>().unwrap().octets())
    }

    #[test]
    fn ipv4_from_bytes_and_ints() {
        assert_eq!(ipv4_from_int(0x0100007f), "127.0.0.1");
        assert_eq!(ipv4_text(&[10, 0, 0, 255]), "10.0.0.255");
        assert_eq!(ntop(AF_INET, &[254, 128, 0, 0, 9]), "254.128.0.0");
    }

    #[test]
    fn ipv6_compresses_like_glibc() {
        assert_eq!(v6("2001:db8::ff00:42:8329"), "2001:db8::ff00:42:8329");
        assert_eq!(v6("fe80::1"), "fe80::1");
        assert_eq!(v6("::"), "::");
        assert_eq!(v6("::1"), "::1");
        assert_eq!(v6("1::"), "1::");
        assert_eq!(v6("1:0:0:2:0:0:0:3"), "1:0:0:2::3");
        assert_eq!(v6("1:0:2:3:4:5:6:7"), "1:0:2:3:4:5:6:7");
        assert_eq!(v6("::ffff:1.2.3.4"), "::ffff:1.2.3.4");
        assert_eq!(v6("::1.2.3.4"), "::1.2.3.4");
        assert_eq!(v6("1:2:3:4:5:6:7:8"), "1:2:3:4:5:6:7:8");
    }

    #[test]
    fn mac_addresses_are_upper_case() {
        assert_eq!(
            macaddr_text(&[1, 2, 3, 0xaa, 0xbb, 0xcc]),
            "01:02:03:AA:BB:CC"
        );
        assert_eq!(macaddr_text(&[1]), "01:00:00:00:00:00");
    }
}
