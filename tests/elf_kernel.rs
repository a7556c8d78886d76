//! End to end through a standard loader and the kernel: source → `strobe::asm::assemble` →
//! `strobe::elf::write_object` → aya-obj (parse, map and call relocation) → BPF_PROG_LOAD →
//! BPF_PROG_TEST_RUN. The program writes a map value and calls a function in `.text`; the
//! return value and the map contents prove the ELF's symbols, map definitions and both
//! relocation kinds mean what they should. Skips loudly without CAP_BPF.

use std::collections::HashSet;

const SOURCE: &str = r#"
.license "GPL"
.map counts type=array key=4 value=8 entries=1

.section "socket"
.globl prog
prog:
    *(u32 *)(r10 - 4) = 0
    r2 = r10
    r2 += -4
    r1 = counts ll
    call bpf_map_lookup_elem
    if r0 == 0 goto out
    r1 = 42
    *(u64 *)(r0 + 0) = r1
    call add_seven
    r0 += 1
    exit
out:
    r0 = 0
    exit

.text
.globl add_seven
add_seven:
    r0 = 7
    exit
"#;

const BPF_MAP_CREATE: i64 = 0;
const BPF_MAP_LOOKUP_ELEM: i64 = 1;
const BPF_PROG_LOAD: i64 = 5;
const BPF_PROG_TEST_RUN: i64 = 10;
const BPF_PROG_TYPE_SOCKET_FILTER: u32 = 1;

/// A zeroed `union bpf_attr` with typed field setters at the uapi offsets.
#[repr(C, align(8))]
struct Attr([u8; 128]);

impl Attr {
    fn new() -> Attr {
        Attr([0; 128])
    }
    fn u32(mut self, off: usize, v: u32) -> Attr {
        self.0[off..off + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64(mut self, off: usize, v: u64) -> Attr {
        self.0[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn get_u32(&self, off: usize) -> u32 {
        u32::from_ne_bytes(self.0[off..off + 4].try_into().unwrap())
    }
}

fn bpf(cmd: i64, attr: &mut Attr) -> Result<i64, std::io::Error> {
    // SAFETY: `attr` is a valid, writable bpf_attr-sized buffer for the whole call.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.0.as_mut_ptr(), attr.0.len()) };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

struct Fd(i32);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this descriptor.
        unsafe { libc::close(self.0) };
    }
}

#[test]
fn assembled_elf_loads_through_aya_obj_and_runs_in_the_kernel() {
    let test = "assembled_elf_loads_through_aya_obj_and_runs_in_the_kernel";
    let mut attr = Attr::new().u32(0, 2).u32(4, 4).u32(8, 8).u32(12, 1); // ARRAY 4/8/1
    let map = match bpf(BPF_MAP_CREATE, &mut attr) {
        Ok(fd) => Fd(fd as i32),
        Err(e) => {
            strobe::testkit::skip(test, &format!("cannot create a BPF map: {e}"));
            return;
        }
    };

    let src = strobe::diag::SourceFile::new("prog.s", SOURCE);
    let obj = strobe::asm::assemble(&src).expect("assembles");
    let bytes = strobe::elf::write_object(&obj).unwrap();

    let mut aya = aya_obj::Object::parse(&bytes).expect("aya-obj parses");
    let text: HashSet<usize> = {
        let elf = goblin::elf::Elf::parse(&bytes).unwrap();
        let i = elf
            .section_headers
            .iter()
            .position(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".text"))
            .unwrap();
        [i].into()
    };
    let maps = aya.maps.clone();
    aya.relocate_maps([("counts", map.0, &maps["counts"])].into_iter(), &text)
        .expect("map relocation");
    aya.relocate_calls(&text).expect("call relocation");
    let key = aya.programs["prog"].function_key();
    let insns: Vec<u8> = aya.functions[&key]
        .instructions
        .iter()
        .flat_map(|i| {
            strobe::asm::Insn::new(i.code, i.dst_reg(), i.src_reg(), i.off, i.imm).to_bytes()
        })
        .collect();

    let license = b"GPL\0";
    let mut log = vec![0u8; 1 << 16];
    let mut attr = Attr::new()
        .u32(0, BPF_PROG_TYPE_SOCKET_FILTER)
        .u32(4, (insns.len() / 8) as u32)
        .u64(8, insns.as_ptr() as u64)
        .u64(16, license.as_ptr() as u64)
        .u32(24, 1)
        .u32(28, log.len() as u32)
        .u64(32, log.as_mut_ptr() as u64);
    let prog = match bpf(BPF_PROG_LOAD, &mut attr) {
        Ok(fd) => Fd(fd as i32),
        Err(e) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            panic!(
                "BPF_PROG_LOAD failed: {e}\n{}",
                String::from_utf8_lossy(&log[..end])
            );
        }
    };

    let packet = [0u8; 64];
    let mut attr = Attr::new()
        .u32(0, prog.0 as u32)
        .u32(8, packet.len() as u32)
        .u64(16, packet.as_ptr() as u64)
        .u32(32, 1);
    bpf(BPF_PROG_TEST_RUN, &mut attr).expect("BPF_PROG_TEST_RUN");
    assert_eq!(attr.get_u32(4), 8, "prog returns add_seven() + 1");

    let (key, mut value) = (0u32, 0u64);
    let mut attr = Attr::new()
        .u32(0, map.0 as u32)
        .u64(8, &key as *const u32 as u64)
        .u64(16, &mut value as *mut u64 as u64);
    bpf(BPF_MAP_LOOKUP_ELEM, &mut attr).expect("map lookup");
    assert_eq!(
        value, 42,
        "prog stored 42 through the relocated map reference"
    );
}
