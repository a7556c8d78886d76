//! Output records of generated code, checked in the kernel: a printf record built by the
//! code generator, read back through the ring buffer reader and rendered by the userspace
//! printf formatter, must print what the arguments say; a full ring counts lost records.

use crate::codegen_support;

use codegen_support::{available, map, percpu_sum, Env};
use strobe::codegen::emit::builtins::ctx_u64;
use strobe::codegen::emit::maps::Counter;
use strobe::codegen::emit::mem::write_str;
use strobe::codegen::emit::output::{submit, EventKind, Record, RECORD_HEADER_SIZE};
use strobe::codegen::emit::{strings, IntTy, Value};
use strobe::codegen::Builder;
use strobe::runtime::format::decode::{FieldType, NoResolver};
use strobe::runtime::format::{PrintfCall, TextStyle};
use strobe::runtime::ringbuf::RingBuf;
use strobe::sys::MapType;

fn printf_fields() -> Vec<FieldType> {
    vec![
        FieldType::Int {
            bytes: 8,
            signed: true,
        },
        FieldType::Str { size: 16 },
        FieldType::Int {
            bytes: 4,
            signed: false,
        },
        FieldType::Int {
            bytes: 2,
            signed: false,
        },
        FieldType::Buf { capacity: 6 },
    ]
}

#[test]
fn printf_records_render_through_the_userspace_formatter() {
    if !available("printf_records_render_through_the_userspace_formatter") {
        return;
    }
    let mut env = Env::new();
    env.add("rb", map(MapType::Ringbuf, "rb", 0, 0, 1 << 16));
    env.add("lost", map(MapType::PercpuArray, "lost", 4, 8, 1));
    let call = PrintfCall::new("%ld %s %u %x %r\n", printf_fields()).unwrap();
    let mut b = Builder::new();
    let rb = b.map("rb");
    let lost = b.map("lost");
    let rec = Record::new(&mut b, EventKind::Printf, 7, &printf_fields()).unwrap();
    for (i, off) in call.offsets().iter().enumerate() {
        assert_eq!(
            rec.arg(i).off as usize,
            RECORD_HEADER_SIZE + off,
            "arg {i} offset"
        );
    }
    let a = ctx_u64(&mut b, 0, IntTy::I64);
    rec.set_int(&mut b, 0, a);
    let which = ctx_u64(&mut b, 1, IntTy::U64);
    let place = rec.arg(1);
    strobe::codegen::emit::control::if_else(
        &mut b,
        which,
        |b| write_str(b, place, b"hello", 16),
        |b: &mut Builder| write_str(b, place, b"a-longer-string-cut", 16),
    );
    let u = ctx_u64(&mut b, 2, IntTy::U32);
    rec.set_int(&mut b, 2, u);
    let h = ctx_u64(&mut b, 3, IntTy::U16);
    rec.set_int(&mut b, 3, h);
    // buf(&"abcdefgh", arg4): the bytes come from a stack string through probe_read.
    let src = b.slot(8, 8);
    write_str(
        &mut b,
        strobe::codegen::emit::Place::new(src, 0),
        b"abcdefg",
        8,
    );
    let addr = b.vreg();
    b.slot_addr(addr, src, 0);
    let n = ctx_u64(&mut b, 4, IntTy::U64);
    strings::read_buf(&mut b, false, rec.arg(4), 6, Value::Reg(addr), n);
    submit(&mut b, rb, &rec, Some(Counter::percpu(lost, 0)));
    b.exit(0);
    let p = env.load(b);
    let runs: [(i64, u64, u32, u16, u64); 4] = [
        (-5, 1, 7, 0xff, 3),
        (i64::MIN, 0, u32::MAX, 0, 0),
        (42, 1, 0, 0xbeef, 6),
        (0, 0, 1, 1, 100),
    ];
    for (a, which, u, h, n) in runs {
        p.run(&[a as u64, which, u as u64, h as u64, n]);
    }
    let mut ring = RingBuf::from_map(env.get("rb")).unwrap();
    let mut texts = Vec::new();
    ring.drain(|rec| {
        let kind = u32::from_le_bytes(rec[0..4].try_into().unwrap());
        let id = u32::from_le_bytes(rec[4..8].try_into().unwrap());
        assert_eq!((kind, id), (EventKind::Printf as u32, 7));
        let text = call
            .render(
                &rec[RECORD_HEADER_SIZE..],
                &NoResolver,
                TextStyle::default(),
            )
            .unwrap();
        texts.push(String::from_utf8(text).unwrap());
    })
    .unwrap();
    let want: Vec<String> = runs
        .iter()
        .map(|&(a, which, u, h, n)| {
            let s = if which != 0 {
                "hello"
            } else {
                "a-longer-string"
            };
            let buf: String = b"abcdef"[..n.min(6) as usize]
                .iter()
                .map(|c| format!("{}", *c as char))
                .collect();
            format!("{a} {s} {u} {h:x} {buf}\n")
        })
        .collect();
    assert_eq!(texts, want);
    assert_eq!(
        percpu_sum(env.get("lost"), &0u32.to_le_bytes()).unwrap()[0],
        0
    );
}

#[test]
fn records_that_do_not_fit_the_ring_are_counted_as_lost() {
    if !available("records_that_do_not_fit_the_ring_are_counted_as_lost") {
        return;
    }
    let mut env = Env::new();
    let page = strobe::runtime::ringbuf::page_size() as u32;
    env.add("rb", map(MapType::Ringbuf, "rb", 0, 0, page));
    env.add("lost", map(MapType::PercpuArray, "lost", 4, 8, 2));
    let fields = vec![
        FieldType::Int {
            bytes: 8,
            signed: false,
        };
        4
    ];
    let mut b = Builder::new();
    let rb = b.map("rb");
    let lost = b.map("lost");
    let rec = Record::new(&mut b, EventKind::Print, 1, &fields).unwrap();
    for i in 0..4 {
        let v = ctx_u64(&mut b, 0, IntTy::U64);
        rec.set_int(&mut b, i, v);
    }
    submit(&mut b, rb, &rec, Some(Counter::percpu(lost, 1)));
    b.exit(0);
    let p = env.load(b);
    let total = 300u64;
    for i in 0..total {
        p.run(&[i]);
    }
    let mut ring = RingBuf::from_map(env.get("rb")).unwrap();
    let mut seen = Vec::new();
    ring.drain(|r| seen.push(u64::from_le_bytes(r[8..16].try_into().unwrap())))
        .unwrap();
    let lost = percpu_sum(env.get("lost"), &1u32.to_le_bytes()).unwrap()[0];
    assert!(lost > 0, "a one-page ring cannot hold {total} records");
    assert_eq!(seen.len() as u64 + lost, total);
    // What arrived is the first records, in order.
    assert_eq!(seen, (0..seen.len() as u64).collect::<Vec<_>>());
}

#[test]
fn records_larger_than_the_stack_are_built_in_a_per_cpu_scratch_buffer() {
    if !available("records_larger_than_the_stack_are_built_in_a_per_cpu_scratch_buffer") {
        return;
    }
    let fields = vec![
        FieldType::Str { size: 200 },
        FieldType::Int {
            bytes: 8,
            signed: false,
        },
        FieldType::Str { size: 200 },
        FieldType::Str { size: 200 },
    ];
    let size = strobe::codegen::emit::output::record_size(&fields);
    assert!(size > 512);
    let mut env = Env::new();
    env.add("rb", map(MapType::Ringbuf, "rb", 0, 0, 1 << 16));
    env.add("scratch", map(MapType::PercpuArray, "scratch", 4, 1024, 1));
    let call = PrintfCall::new("%s|%lu|%s|%s\n", fields.clone()).unwrap();
    let mut b = Builder::new();
    let rb = b.map("rb");
    let sc = b.map("scratch");
    // Too big for the stack…
    assert!(Record::new(&mut b, EventKind::Printf, 3, &fields).is_err());
    // …so it goes to the scratch buffer.
    let place = strobe::codegen::emit::maps::scratch(&mut b, sc, 0);
    let rec = Record::new_at(&mut b, place, EventKind::Printf, 3, &fields);
    write_str(&mut b, rec.arg(0), &[b'x'; 250], 200);
    let n = ctx_u64(&mut b, 0, IntTy::U64);
    rec.set_int(&mut b, 1, n);
    write_str(&mut b, rec.arg(2), b"middle", 200);
    // The last string is read by a helper straight into the scratch memory.
    let src = b.slot(16, 8);
    write_str(
        &mut b,
        strobe::codegen::emit::Place::new(src, 0),
        b"from-read",
        16,
    );
    let addr = b.vreg();
    b.slot_addr(addr, src, 0);
    strings::read_str(&mut b, false, rec.arg(3), 200, Value::Reg(addr));
    submit(&mut b, rb, &rec, None);
    b.exit(0);
    let p = env.load(b);
    p.run(&[77]);
    let mut ring = RingBuf::from_map(env.get("rb")).unwrap();
    let mut texts = Vec::new();
    ring.drain(|r| {
        assert_eq!(r.len(), size);
        let t = call
            .render(&r[RECORD_HEADER_SIZE..], &NoResolver, TextStyle::default())
            .unwrap();
        texts.push(String::from_utf8(t).unwrap());
    })
    .unwrap();
    assert_eq!(
        texts,
        vec![format!("{}|77|middle|from-read\n", "x".repeat(199))]
    );
}
