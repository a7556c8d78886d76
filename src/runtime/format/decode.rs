//! Record and map-value layouts, and decoding their bytes into [`Value`]s.
//!
//! The code generator lays values out with [`FieldType::size`], [`FieldType::align`] and
//! [`tuple_offsets`] (C struct rules: each field at a multiple of its alignment, the whole
//! padded to the largest alignment), so the two sides agree by construction.
//! Layouts of the runtime types (little-endian):
//! - `Buf`: `u32 length` then `capacity` bytes (length clamped to capacity on decode);
//! - `Inet`: `u64 af` then 16 address bytes; `MacAddr`: 6 bytes;
//! - `KSym`, `Username`, `Probe`: one `u64`; `USym`: `u64 addr, i32 pid, i32 probe id`;
//! - `KStack`: `i64 stack id` (a key of the stack-trace map for its limit, negative when the
//!   kernel could not record the stack); `UStack`: `i32 pid, i32 probe id, i64 stack id`; the
//!   frames come from [`Resolver::stack`];
//! - `Timestamp`: `u64` nanoseconds since boot ([`Resolver::wall_from_boot`] makes it wall
//!   clock time); `CgroupPath`: `u64` cgroup id.
//! - `Struct`: the bytes of a C struct/union value as they were in memory; its members are at
//!   the offsets of its [`StructLayout`] (C's, from BTF or the script's definition, not the
//!   tuple rules), a union's all at 0, each decoded and printed as bpftrace does
//!   (`{ .a = 1, .b = { .c = 2 }, .p = 0xffff… }`, a JSON object); `Opaque` (a float member)
//!   decodes to none.
//!
//! Input: bytes and a layout; a [`Resolver`] for what needs the runtime (symbols, user names,
//! probe names, local time). Output: a [`Value`].
//! Invariant: short input is an error, never a panic; garbage in gives some value out.

use super::net::{macaddr_text, ntop};
use super::stack::{sym_text, Frame, Stack, Sym};
use super::time::{strftime, Tm};
use super::value::Value;
use crate::plan::layout::align_up;
pub use crate::plan::layout::{strerror_text, tuple_offsets, FieldType, StructField, StructLayout};

/// Why bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("record too short: {what} needs {need} bytes at offset {offset}, record has {have}")]
    Short {
        what: &'static str,
        offset: usize,
        need: usize,
        have: usize,
    },
}

/// What decoding needs from the running tracer. Every method has a neutral default.
pub trait Resolver {
    /// The kernel symbol containing `addr`.
    fn ksym(&self, _addr: u64) -> Option<Sym> {
        None
    }
    /// The symbol containing `addr` in process `pid`, recorded by probe `probe` (its index in
    /// the script; negative: unknown). `frame`: the address is frame `i` of a user stack
    /// (frame 0 the probed instruction, later ones return addresses), whose symbol may carry
    /// file:line and inlined calls; `None` for `usym()`/`func`.
    fn usym(&self, _pid: i32, _probe: i32, _addr: u64, _frame: Option<usize>) -> Option<Sym> {
        None
    }
    /// The frame addresses stored under stack id `id` in the stack-trace map of `user`
    /// (`ustack`) stacks of depth `limit`.
    fn stack(&self, _user: bool, _limit: usize, _id: i64) -> Option<Vec<u64>> {
        None
    }
    /// The entries (`struct bpf_stack_build_id`, [`crate::plan::BUILD_ID_FRAME_SIZE`] bytes
    /// each) stored under stack id `id` in the build-id stack map of depth `limit`.
    fn build_id_stack(&self, _limit: usize, _id: i64) -> Option<Vec<u8>> {
        None
    }
    /// The user name of `uid`.
    fn username(&self, _uid: u64) -> Option<String> {
        None
    }
    /// The probe's full name for `probe` ids.
    fn probe_name(&self, _id: u64) -> Option<String> {
        None
    }
    /// Wall-clock nanoseconds since the Unix epoch of a `strftime()` argument, which counts
    /// nanoseconds since boot (bpftrace adds the boot time to it). Default: taken as is.
    fn wall_from_boot(&self, ns: u64) -> u64 {
        ns
    }
    /// `cgroup_path()`: the cgroup's path in each hierarchy whose name matches `filter`, as
    /// `name:path` joined by `,` (bpftrace's text).
    fn cgroup_path(&self, _id: u64, _filter: &str) -> Option<String> {
        None
    }
    /// Local time for `strftime`: (UTC offset in seconds, zone name).
    fn local_offset(&self, unix: i64) -> (i64, String) {
        super::time::local_offset(unix).unwrap_or((0, "UTC".into()))
    }
}

/// A resolver that resolves nothing and shows times in UTC (tests, offline decoding).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoResolver;

impl Resolver for NoResolver {
    fn local_offset(&self, _unix: i64) -> (i64, String) {
        (0, "UTC".into())
    }
}

fn get<'a>(b: &'a [u8], off: usize, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
    b.get(off..off.saturating_add(n)).ok_or(DecodeError::Short {
        what,
        offset: off,
        need: n,
        have: b.len(),
    })
}

fn u64_at(b: &[u8], off: usize, what: &'static str) -> Result<u64, DecodeError> {
    let s = get(b, off, 8, what)?;
    Ok(u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
}

fn i64_at(b: &[u8], off: usize, what: &'static str) -> Result<i64, DecodeError> {
    Ok(u64_at(b, off, what)? as i64)
}

fn i32_at(b: &[u8], off: usize, what: &'static str) -> Result<i32, DecodeError> {
    let s = get(b, off, 4, what)?;
    Ok(i32::from_le_bytes(s.try_into().unwrap_or([0; 4])))
}

fn frames(
    r: &dyn Resolver,
    user: bool,
    limit: usize,
    id: i64,
    mut resolve: impl FnMut(u64) -> Option<Sym>,
) -> Vec<Frame> {
    if id < 0 {
        return Vec::new();
    }
    let mut addrs = r.stack(user, limit, id).unwrap_or_default();
    // The kernel zero-fills the frames past the stack's depth.
    let n = addrs.iter().position(|&a| a == 0).unwrap_or(addrs.len());
    addrs.truncate(n.min(limit));
    addrs
        .into_iter()
        .map(|addr| Frame {
            addr,
            sym: resolve(addr),
        })
        .collect()
}

/// The frames of a build-id stack: `struct bpf_stack_build_id` entries (include/uapi/linux/
/// bpf.h; status 1 = `BPF_STACK_BUILD_ID_VALID`: build id and offset, else the ip). A frame
/// with a build id is a [`Sym`] named by the id in hex, its offset the offset in the object.
fn build_id_frames(bytes: &[u8], limit: usize) -> Vec<Frame> {
    const VALID: i32 = 1;
    bytes
        .chunks_exact(crate::plan::BUILD_ID_FRAME_SIZE)
        .take(limit)
        .map(|e| {
            let status = i32::from_le_bytes(e[0..4].try_into().unwrap_or([0; 4]));
            let value = u64::from_le_bytes(e[24..32].try_into().unwrap_or([0; 8]));
            let sym = (status == VALID).then(|| Sym {
                name: e[4..24].iter().map(|b| format!("{b:02x}")).collect(),
                offset: value,
                ..Default::default()
            });
            Frame { addr: value, sym }
        })
        // The kernel zero-fills the entries past the stack's depth (status 0, ip 0).
        .take_while(|f| f.sym.is_some() || f.addr != 0)
        .collect()
}

/// Decodes one value of type `ty` from the start of `b`.
pub fn decode(ty: &FieldType, b: &[u8], r: &dyn Resolver) -> Result<Value, DecodeError> {
    Ok(match ty {
        FieldType::Int { bytes, signed } => {
            let n = (*bytes as usize).clamp(1, 8);
            let s = get(b, 0, n, "integer")?;
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(s);
            let raw = u64::from_le_bytes(w);
            if *signed {
                let shift = 64 - 8 * n as u32;
                Value::Int(((raw << shift) as i64) >> shift)
            } else {
                Value::UInt(raw)
            }
        }
        FieldType::Enum {
            bytes,
            signed,
            variants,
        } => {
            let int = FieldType::Int {
                bytes: *bytes,
                signed: *signed,
            };
            let v = decode(&int, b, r)?;
            let n = match v {
                Value::Int(n) => n,
                Value::UInt(n) => n as i64,
                _ => return Ok(v),
            };
            match variants.iter().find(|(value, _)| *value == n) {
                Some((_, name)) => Value::Symbolic {
                    name: name.as_bytes().to_vec(),
                    number: n as u64,
                },
                None => v,
            }
        }
        FieldType::Bool => Value::Bool(get(b, 0, 1, "bool")?[0] != 0),
        FieldType::Pointer => Value::Pointer(u64_at(b, 0, "pointer")?),
        FieldType::Str { size } => Value::from_c_bytes(get(b, 0, *size, "string")?),
        FieldType::Buf { capacity } => {
            let len = (i32_at(b, 0, "buffer length")? as u32 as usize).min(*capacity);
            Value::Buf(get(b, 4, len, "buffer")?.to_vec())
        }
        FieldType::Tuple(fs) => Value::Tuple(decode_seq(fs.iter(), b, r)?),
        FieldType::Record(fs) => {
            let vs = decode_seq(fs.iter().map(|f| &f.1), b, r)?;
            Value::Record(fs.iter().map(|f| f.0.clone()).zip(vs).collect())
        }
        FieldType::Array { elem, len } => {
            let sz = elem.size();
            let vs = (0..*len)
                .map(|i| decode(elem, b.get(i * sz..).unwrap_or(&[]), r))
                .collect::<Result<_, _>>()?;
            Value::Array(vs)
        }
        FieldType::MacAddr => Value::Symbol(macaddr_text(get(b, 0, 6, "mac address")?).into()),
        FieldType::Inet => {
            let af = u64_at(b, 0, "address family")?;
            Value::Symbol(ntop(af, get(b, 8, 16, "address")?).into())
        }
        FieldType::KSym => {
            let addr = u64_at(b, 0, "kernel address")?;
            let s = r.ksym(addr);
            Value::Symbol(sym_text(addr, s.as_ref().map(|s| s.name.as_str())).into())
        }
        FieldType::USym => {
            let addr = u64_at(b, 0, "user address")?;
            let pid = i32_at(b, 8, "pid")?;
            let probe = i32_at(b, 12, "probe id")?;
            let s = r.usym(pid, probe, addr, None);
            Value::Symbol(sym_text(addr, s.as_ref().map(|s| s.name.as_str())).into())
        }
        FieldType::KStack { limit, mode } => Value::Stack(Stack {
            frames: frames(r, false, *limit, i64_at(b, 0, "stack id")?, |a| r.ksym(a)),
            mode: *mode,
            user: false,
        }),
        FieldType::UStack {
            limit,
            mode: mode @ crate::plan::layout::StackMode::BuildId,
        } => {
            let id = i64_at(b, 8, "stack id")?;
            let bytes = if id < 0 {
                Vec::new()
            } else {
                r.build_id_stack(*limit, id).unwrap_or_default()
            };
            Value::Stack(Stack {
                frames: build_id_frames(&bytes, *limit),
                mode: *mode,
                user: true,
            })
        }
        FieldType::UStack { limit, mode } => {
            let pid = i32_at(b, 0, "pid")?;
            let probe = i32_at(b, 4, "probe id")?;
            let mut i = 0;
            Value::Stack(Stack {
                frames: frames(r, true, *limit, i64_at(b, 8, "stack id")?, |a| {
                    i += 1;
                    // Raw stacks print addresses only: no file is read for them.
                    (*mode != crate::plan::layout::StackMode::Raw)
                        .then(|| r.usym(pid, probe, a, Some(i - 1)))
                        .flatten()
                }),
                mode: *mode,
                user: true,
            })
        }
        FieldType::Username => {
            let uid = u64_at(b, 0, "uid")?;
            Value::Symbol(r.username(uid).unwrap_or_else(|| uid.to_string()).into())
        }
        FieldType::Probe => {
            let id = u64_at(b, 0, "probe id")?;
            Value::Symbol(r.probe_name(id).unwrap_or_default().into())
        }
        FieldType::CgroupPath { filter } => {
            let id = u64_at(b, 0, "cgroup id")?;
            Value::Symbol(r.cgroup_path(id, filter).unwrap_or_default().into())
        }
        FieldType::Strerror => Value::Symbol(strerror_text(u64_at(b, 0, "errno")? as i32).into()),
        FieldType::SignalName => {
            Value::Symbol(crate::plan::layout::signal_text(u64_at(b, 0, "signal")? as i64).into())
        }
        FieldType::SyscallName => {
            let nr = u64_at(b, 0, "syscall number")? as i32;
            Value::Symbol(super::syscalls::name(nr).into())
        }
        FieldType::Struct(l) => Value::Record(
            l.fields
                .iter()
                .map(|f| Ok((f.name.clone(), decode_member(f, b, r)?)))
                .collect::<Result<_, DecodeError>>()?,
        ),
        FieldType::Opaque { size, .. } => {
            get(b, 0, *size, "value")?;
            Value::None
        }
        FieldType::Timestamp { format } => {
            let ns = r.wall_from_boot(u64_at(b, 0, "timestamp")?);
            let secs = (ns / 1_000_000_000) as i64;
            let (off, zone) = r.local_offset(secs);
            let tm = Tm::from_unix(secs, off, &zone);
            Value::Symbol(strftime(
                format.as_bytes(),
                &tm,
                (ns % 1_000_000_000) as u32,
            ))
        }
    })
}

/// One member of a struct value at the start of `b`.
fn decode_member(f: &StructField, b: &[u8], r: &dyn Resolver) -> Result<Value, DecodeError> {
    let at = b.get(f.offset..).unwrap_or(&[]);
    let Some((shift, width)) = f.bits else {
        return Ok(match decode(&f.ty, at, r)? {
            // bpftrace prints a struct's pointer members in hex (numbers in JSON).
            Value::Pointer(p) => Value::Symbolic {
                name: format!("0x{p:x}").into_bytes(),
                number: p,
            },
            v => v,
        });
    };
    let signed = matches!(f.ty, FieldType::Int { signed: true, .. });
    let width = u32::from(width).clamp(1, 64);
    let n = ((u32::from(shift) + width).div_ceil(8) as usize).clamp(1, 8);
    let s = get(at, 0, n, "bitfield")?;
    let mut w = [0u8; 8];
    w[..n].copy_from_slice(s);
    let raw = u64::from_le_bytes(w) >> u32::from(shift).min(63);
    let up = 64 - width;
    Ok(if signed {
        Value::Int(((raw << up) as i64) >> up)
    } else {
        Value::UInt((raw << up) >> up)
    })
}

/// Decodes the fields of a tuple-laid-out record (printf arguments, multi-field map keys).
pub fn decode_fields(
    fields: &[FieldType],
    b: &[u8],
    r: &dyn Resolver,
) -> Result<Vec<Value>, DecodeError> {
    decode_seq(fields.iter(), b, r)
}

/// Decodes fields laid out one after another by C struct rules.
fn decode_seq<'a>(
    fields: impl Iterator<Item = &'a FieldType>,
    b: &[u8],
    r: &dyn Resolver,
) -> Result<Vec<Value>, DecodeError> {
    let mut off = 0;
    let mut out = Vec::new();
    for f in fields {
        off = align_up(off, f.align());
        out.push(decode(f, b.get(off..).unwrap_or(&[]), r)?);
        off += f.size();
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
