//! Shared harness of the codegen kernel tests: build a program with `strobe::codegen`, finish it
//! into a template (with the arming guard, armed here), instantiate it with real map fds, load
//! it as a raw tracepoint program and run it with BPF_PROG_TEST_RUN.
//!
//! Results come back through the `out` map: a one-entry ARRAY whose value is `OUT_SLOTS` u64
//! words; programs store result `i` at word `i` through a direct map-value pointer.
#![allow(dead_code)]

use std::collections::HashMap;
use std::os::fd::AsRawFd;

use strobe::codegen::emit::arith::BinOp;
use strobe::codegen::emit::{IntTy, Value};
use strobe::codegen::{finish, Builder, Compiled, FinishOptions};
use strobe::sys::{
    Map, MapCreateOptions, MapType, Prog, ProgLoadOptions, ProgType, TestRunOptions, UpdateFlags,
};
use strobe::template::{instantiate, AttachKind, TargetValues, ARM_MAP_NAME};

pub const OUT_SLOTS: usize = 64;
pub const OUT: &str = "out";

/// Whether this host can run the tests; prints the skip reason when not.
pub fn available(test: &str) -> bool {
    match Map::create(
        MapType::Array,
        &MapCreateOptions {
            name: "probe",
            key_size: 4,
            value_size: 8,
            max_entries: 1,
            ..Default::default()
        },
    ) {
        Ok(_) => {}
        Err(e) => {
            strobe_testkit::skip(test, &format!("cannot create BPF maps: {e}"));
            return false;
        }
    }
    let insns = [
        strobe::asm::Insn::mov64_imm(strobe::asm::Reg::R0, 0),
        strobe::asm::Insn::exit(),
    ];
    match Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)) {
        Ok(_) => true,
        Err(e) => {
            strobe_testkit::skip(test, &format!("cannot load raw_tp programs: {e}"));
            false
        }
    }
}

pub fn map(t: MapType, name: &str, key_size: u32, value_size: u32, max_entries: u32) -> Map {
    Map::create(
        t,
        &MapCreateOptions {
            name,
            key_size,
            value_size,
            max_entries,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("creating map {name}: {e}"))
}

/// The maps a test program may use, by name; `out` and the arming map always exist.
pub struct Env {
    pub maps: HashMap<String, Map>,
}

impl Default for Env {
    fn default() -> Self {
        Env::new()
    }
}

impl Env {
    pub fn new() -> Env {
        let mut maps = HashMap::new();
        maps.insert(
            OUT.to_string(),
            map(MapType::Array, OUT, 4, 8 * OUT_SLOTS as u32, 1),
        );
        let arm = map(MapType::Array, ARM_MAP_NAME, 4, 4, 1);
        arm.update(
            &0u32.to_le_bytes(),
            &1u32.to_le_bytes(),
            UpdateFlags::empty(),
        )
        .unwrap();
        maps.insert(ARM_MAP_NAME.to_string(), arm);
        Env { maps }
    }

    pub fn add(&mut self, name: &str, m: Map) {
        self.maps.insert(name.to_string(), m);
    }

    pub fn get(&self, name: &str) -> &Map {
        &self.maps[name]
    }

    /// Finishes `b` and loads it; panics with the verifier log and listing when refused.
    pub fn load(&self, b: Builder) -> Loaded {
        let c = finish(
            b,
            &FinishOptions {
                name: "cg_test".into(),
                attach: AttachKind::RawTracepoint,
                arming_guard: true,
            },
        )
        .unwrap_or_else(|e| panic!("codegen failed: {e}"));
        self.load_compiled(c)
    }

    pub fn load_compiled(&self, c: Compiled) -> Loaded {
        let consts = vec![0i64; c.template.consts.len()];
        self.load_target(c, 0, &[], None, &consts)
    }

    /// Loads `c` instantiated for one target: its index, argument slots, return slot and
    /// constants (what the loader patches per clone).
    pub fn load_target(
        &self,
        c: Compiled,
        index: u32,
        arg_slots: &[i64],
        ret_slot: Option<i64>,
        consts: &[i64],
    ) -> Loaded {
        let fds: Vec<i32> = c
            .template
            .maps
            .iter()
            .map(|n| {
                self.maps
                    .get(n)
                    .unwrap_or_else(|| panic!("test did not create map {n}"))
                    .as_raw_fd()
            })
            .collect();
        let insns = instantiate(
            &c.template,
            &TargetValues {
                index,
                map_fds: &fds,
                arg_slots,
                ret_slot,
                consts,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("instantiate: {e}"));
        // Programs with callbacks (subprograms) load with their function BTF.
        let funcs = strobe::loader::subprogs::FuncBtfObj::load(&c.template);
        let mut opts = ProgLoadOptions::new(ProgType::RawTracepoint, &insns);
        if let Some(f) = &funcs {
            f.apply(&mut opts);
        }
        let prog = Prog::load(&opts).unwrap_or_else(|e| {
            panic!(
                "verifier refused the program: {e}\n{}\n--- listing ---\n{}",
                e.log,
                strobe::asm::disassemble(&c.template.insns)
            )
        });
        Loaded { prog, compiled: c }
    }

    /// The `out` words.
    pub fn out(&self) -> Vec<u64> {
        let v = self
            .get(OUT)
            .lookup_vec(&0u32.to_le_bytes())
            .unwrap()
            .unwrap();
        v.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    pub fn clear_out(&self) {
        self.get(OUT)
            .update(
                &0u32.to_le_bytes(),
                &vec![0u8; 8 * OUT_SLOTS],
                UpdateFlags::empty(),
            )
            .unwrap();
    }
}

pub struct Loaded {
    pub prog: Prog,
    pub compiled: Compiled,
}

impl Loaded {
    /// Runs the program once with `args` as the raw tracepoint arguments; returns r0.
    pub fn run(&self, args: &[u64]) -> u32 {
        self.prog
            .test_run(&mut TestRunOptions::raw_tp(args))
            .unwrap_or_else(|e| panic!("test run: {e}"))
            .retval
    }

    pub fn insn_count(&self) -> usize {
        self.compiled.template.insns.len()
    }
}

/// Stores `v` in word `i` of the `out` map.
pub fn store_out(b: &mut Builder, i: usize, v: Value) {
    let out = b.map(OUT);
    let p = b.vreg();
    b.ld_map_value(p, out, 0);
    let s = v.src(b);
    b.store(strobe::asm::isa::Size::Dw, p, 8 * i as i32, s);
}

/// Ends the program with `return 0`.
pub fn ret0(b: &mut Builder) {
    b.exit(0);
}

/// Per-CPU values of `key` in a per-CPU map, as u64 words per CPU.
pub fn percpu_words(m: &Map, key: &[u8]) -> Option<Vec<Vec<u64>>> {
    let v = m.lookup_vec(key).unwrap()?;
    let cpus = strobe::sys::map::possible_cpus();
    let per = v.len() / cpus;
    Some(
        v.chunks_exact(per)
            .map(|c| {
                c.chunks_exact(8)
                    .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
                    .collect()
            })
            .collect(),
    )
}

/// Per-CPU values summed per word.
pub fn percpu_sum(m: &Map, key: &[u8]) -> Option<Vec<u64>> {
    let per = percpu_words(m, key)?;
    let mut sum = vec![0u64; per[0].len()];
    for cpu in per {
        for (s, w) in sum.iter_mut().zip(cpu) {
            *s = s.wrapping_add(w);
        }
    }
    Some(sum)
}

/// The Rust reference for a binary operator at a type: C wrapping semantics, shifts taken
/// mod 64 on the widened value, and bpftrace's rule that division and modulo by zero give 0.
#[allow(dead_code)]
pub fn reference(op: BinOp, ty: IntTy, a: i64, b: i64) -> i64 {
    macro_rules! typed {
        ($t:ty) => {{
            let (x, y) = (a as $t, b as $t);
            let s = (y as i64 & 63) as u32;
            let r: $t = match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::And => x & y,
                BinOp::Or => x | y,
                BinOp::Xor => x ^ y,
                // The register holds the value widened to 64 bits; the shift happens there.
                BinOp::Shl => (x as i64).wrapping_shl(s) as $t,
                BinOp::Shr if ty.signed => ((x as i64) >> s) as $t,
                BinOp::Shr => ((x as i64 as u64 & (<$t>::MAX as u64)) >> s) as $t,
                BinOp::Div | BinOp::Mod if y == 0 => 0,
                BinOp::Div => x.wrapping_div(y),
                BinOp::Mod => x.wrapping_rem(y),
            };
            r as i64
        }};
    }
    match (ty.bits, ty.signed) {
        (8, false) => typed!(u8),
        (16, false) => typed!(u16),
        (32, false) => typed!(u32),
        (64, false) => typed!(u64),
        (8, true) => typed!(i8),
        (16, true) => typed!(i16),
        (32, true) => typed!(i32),
        _ => typed!(i64),
    }
}
