//! A minimal scan of a BTF blob for a `BTF_KIND_FUNC` by name, so the fentry/fexit probe can
//! trial-load against a real target without the full BTF parser (`strobe::btf`). It walks the
//! type section once (layout from the kernel's Documentation/bpf/btf.rst) and checks nothing
//! else; a malformed blob yields `None`.

use super::FuncIdSource;

const MAGIC: u16 = 0xeb9f;
const KIND_FUNC: u32 = 12;

/// Finds functions in `/sys/kernel/btf/vmlinux`.
#[derive(Clone, Copy, Debug, Default)]
pub struct VmlinuxScan;

impl FuncIdSource for VmlinuxScan {
    fn func_id(&self, name: &str) -> Option<u32> {
        let data = std::fs::read("/sys/kernel/btf/vmlinux").ok()?;
        find_func(&data, name)
    }
}

fn u32_at(d: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(off..off + 4)?.try_into().ok()?))
}

/// The type id of the FUNC named `name` in the (non-split) BTF `data`.
pub fn find_func(data: &[u8], name: &str) -> Option<u32> {
    if u16::from_le_bytes(data.get(0..2)?.try_into().ok()?) != MAGIC {
        return None;
    }
    let hdr_len = u32_at(data, 4)? as usize;
    let type_off = u32_at(data, 8)? as usize;
    let type_len = u32_at(data, 12)? as usize;
    let str_off = u32_at(data, 16)? as usize;
    let str_len = u32_at(data, 20)? as usize;
    let types = data.get(hdr_len + type_off..hdr_len + type_off + type_len)?;
    let strs = data.get(hdr_len + str_off..hdr_len + str_off + str_len)?;
    let want = name.as_bytes();
    let mut off = 0;
    let mut id = 1u32;
    while off + 12 <= types.len() {
        let name_off = u32_at(types, off)? as usize;
        let info = u32_at(types, off + 4)?;
        let kind = (info >> 24) & 0x1f;
        let vlen = (info & 0xffff) as usize;
        if kind == KIND_FUNC {
            let s = strs.get(name_off..)?;
            if s.starts_with(want) && s.get(want.len()) == Some(&0) {
                return Some(id);
            }
        }
        off += 12
            + match kind {
                1 | 14 | 17 => 4,     // INT, VAR, DECL_TAG
                3 => 12,              // ARRAY
                4 | 5 => vlen * 12,   // STRUCT, UNION
                6 | 13 => vlen * 8,   // ENUM, FUNC_PROTO
                15 | 19 => vlen * 12, // DATASEC, ENUM64
                0..=19 => 0,
                _ => return None,
            };
        id += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BTF blob with: [1] INT "int", [2] FUNC_PROTO (1 param), [3] FUNC "foo".
    fn blob() -> Vec<u8> {
        let strs = b"\0int\0foo\0x\0";
        let mut t = Vec::new();
        let mut ty = |name: u32, info: u32, size: u32, extra: &[u32]| {
            for w in [name, info, size].iter().chain(extra) {
                t.extend_from_slice(&w.to_le_bytes());
            }
        };
        ty(1, 1 << 24, 4, &[32]);
        ty(0, (13 << 24) | 1, 1, &[9, 1]);
        ty(5, 12 << 24, 2, &[]);
        let mut d = Vec::new();
        d.extend_from_slice(&MAGIC.to_le_bytes());
        d.extend_from_slice(&[1, 0]);
        for w in [24u32, 0, t.len() as u32, t.len() as u32, strs.len() as u32] {
            d.extend_from_slice(&w.to_le_bytes());
        }
        d.extend_from_slice(&t);
        d.extend_from_slice(strs);
        d
    }

    #[test]
    fn finds_a_func_by_exact_name_only() {
        let d = blob();
        assert_eq!(find_func(&d, "foo"), Some(3));
        assert_eq!(find_func(&d, "fo"), None);
        assert_eq!(find_func(&d, "int"), None, "INT is not a FUNC");
        assert_eq!(find_func(&d[..10], "foo"), None);
    }
}
