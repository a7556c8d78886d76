//! DWARF types to BTF, on demand: each request converts the closure of the types it reaches
//! (a struct's members, a pointer's target) that earlier requests did not, appending them to one
//! BTF object per binary, so ids handed out stay valid.
//!
//! Conversion is two passes over the new closure: the first gives every reached entry its BTF
//! id (so self-referencing structs resolve), the second emits them in id order.
//! Entries BTF cannot express (function types, unspecified types) become `void`; `_Atomic` and
//! other transparent qualifiers take their target's id.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use gimli::{constants as dw, AttributeValue, DebugInfoOffset, Dwarf, Unit, UnitOffset};

use super::load::{DebugError, DebugFiles};
use super::{Function, Param, TypeKind, R};
use crate::btf::encode::{BtfBuilder, MemberDef};
use crate::btf::Btf;
use crate::btf::IntInfo;

/// A type entry: (loaded unit index, offset in that unit).
type Key = (usize, usize);

#[derive(Clone, Copy, Debug)]
enum Slot {
    Id(u32),
    Alias(Key),
    Void,
}

/// Deepest type chain followed when spelling or converting (guards malformed cycles).
const MAX_DEPTH: usize = 64;

pub(super) struct State {
    files: DebugFiles,
    /// Loaded units: their DWARF (the main one or a `.dwo`'s) and the unit.
    units: Vec<(Arc<Dwarf<R>>, Unit<R>)>,
    /// Main `.debug_info` offset of a unit header → index in `units`.
    by_offset: HashMap<usize, usize>,
    builder: BtfBuilder,
    /// The array index type every BTF array names.
    index_type: u32,
    memo: HashMap<Key, Slot>,
    snap: Option<Arc<Btf>>,
    funcs: HashMap<String, Option<Function>>,
    /// Named types of the units scanned so far.
    names: HashMap<(TypeKind, String), Key>,
    scanned: HashSet<usize>,
}

fn name_of(
    d: &Dwarf<R>,
    u: &Unit<R>,
    e: &gimli::DebuggingInformationEntry<'_, '_, R>,
) -> Option<String> {
    let v = e.attr_value(dw::DW_AT_name).ok()??;
    let s = d.attr_string(u, v).ok()?;
    Some(s.to_string_lossy().into_owned())
}

fn udata(e: &gimli::DebuggingInformationEntry<'_, '_, R>, at: dw::DwAt) -> Option<u64> {
    e.attr_value(at).ok()??.udata_value()
}

impl State {
    pub fn new(files: DebugFiles) -> State {
        let mut builder = BtfBuilder::new();
        let index_type = builder.add_int("__ARRAY_SIZE_TYPE__", 4, false);
        State {
            files,
            units: Vec::new(),
            by_offset: HashMap::new(),
            builder,
            index_type,
            memo: HashMap::new(),
            snap: None,
            funcs: HashMap::new(),
            names: HashMap::new(),
            scanned: HashSet::new(),
        }
    }

    /// The binary's main DWARF (skeleton units with split DWARF).
    pub fn main_dwarf(&self) -> Arc<Dwarf<R>> {
        self.files.dwarf.clone()
    }

    pub fn snapshot(&mut self) -> Arc<Btf> {
        if let Some(s) = &self.snap {
            return s.clone();
        }
        let btf = self
            .builder
            .finish()
            .ok()
            .and_then(|b| Btf::parse(b).ok())
            .unwrap_or_else(|| {
                Btf::parse(BtfBuilder::new().finish().unwrap_or_default())
                    .expect("empty BTF parses")
            });
        let s = Arc::new(btf);
        self.snap = Some(s.clone());
        s
    }

    fn unit_offsets(&self) -> Result<Vec<usize>, DebugError> {
        let mut out = Vec::new();
        let mut it = self.files.dwarf.units();
        while let Some(h) = it.next().map_err(|e| self.files.malformed(e))? {
            if let Some(o) = h.offset().as_debug_info_offset() {
                out.push(o.0);
            }
        }
        Ok(out)
    }

    /// The unit whose header is at `off` in the main `.debug_info` (its split unit for a
    /// skeleton).
    fn load_unit(&mut self, off: usize) -> Result<usize, DebugError> {
        if let Some(&i) = self.by_offset.get(&off) {
            return Ok(i);
        }
        let d = self.files.dwarf.clone();
        let h = d
            .debug_info
            .header_from_offset(DebugInfoOffset(off))
            .map_err(|e| self.files.malformed(e))?;
        let unit = d.unit(h).map_err(|e| self.files.malformed(e))?;
        let loaded = match unit.dwo_id {
            Some(_) => self.files.split_unit(&unit).unwrap_or((d, unit)),
            None => (d, unit),
        };
        self.units.push(loaded);
        let i = self.units.len() - 1;
        self.by_offset.insert(off, i);
        Ok(i)
    }

    /// The unit `.debug_aranges` says holds address `addr`.
    fn aranges_unit(&self, addr: u64) -> Option<usize> {
        let mut hs = self.files.dwarf.debug_aranges.headers();
        while let Ok(Some(h)) = hs.next() {
            let mut es = h.entries();
            while let Ok(Some(e)) = es.next() {
                let r = e.range();
                if r.begin <= addr && addr < r.end {
                    return Some(h.debug_info_offset().0);
                }
            }
        }
        None
    }

    pub fn function(&mut self, name: &str) -> Result<Option<Function>, DebugError> {
        if let Some(f) = self.funcs.get(name) {
            return Ok(f.clone());
        }
        let mut tried = HashSet::new();
        let mut found = None;
        if let Some(off) = self
            .files
            .symbols
            .get(name)
            .copied()
            .and_then(|a| self.aranges_unit(a))
        {
            tried.insert(off);
            let i = self.load_unit(off)?;
            found = self.find_subprogram(i, name)?.map(|o| (i, o));
        }
        if found.is_none() {
            for off in self.unit_offsets()? {
                if tried.contains(&off) {
                    continue;
                }
                let i = self.load_unit(off)?;
                if let Some(o) = self.find_subprogram(i, name)? {
                    found = Some((i, o));
                    break;
                }
            }
        }
        let f = match found {
            Some((i, o)) => Some(self.prototype(i, o, name)?),
            None => None,
        };
        self.funcs.insert(name.to_string(), f.clone());
        Ok(f)
    }

    /// The offset of the defining `DW_TAG_subprogram` of `name` in unit `i`.
    fn find_subprogram(&self, i: usize, name: &str) -> Result<Option<usize>, DebugError> {
        let (d, u) = &self.units[i];
        let mut c = u.entries();
        while let Some((_, e)) = c.next_dfs().map_err(|e| self.files.malformed(e))? {
            if e.tag() != dw::DW_TAG_subprogram {
                continue;
            }
            if matches!(e.attr_value(dw::DW_AT_declaration), Ok(Some(_))) {
                continue;
            }
            let linkage = |e: &gimli::DebuggingInformationEntry<'_, '_, R>| {
                e.attr_value(dw::DW_AT_linkage_name)
                    .ok()
                    .flatten()
                    .and_then(|v| d.attr_string(u, v).ok())
                    .map(|s| s.to_string_lossy().into_owned())
            };
            if name_of(d, u, e).as_deref() == Some(name) || linkage(e).as_deref() == Some(name) {
                return Ok(Some(e.offset().0));
            }
            // A C++ definition outside its class or namespace names neither itself: its
            // DW_AT_specification points at the declaration that carries the linkage name.
            if let Ok(Some(AttributeValue::UnitRef(o))) = e.attr_value(dw::DW_AT_specification) {
                if let Ok(decl) = u.entry(o) {
                    if linkage(&decl).as_deref() == Some(name) {
                        return Ok(Some(e.offset().0));
                    }
                }
            }
        }
        Ok(None)
    }

    fn type_ref(&self, i: usize, e: &gimli::DebuggingInformationEntry<'_, '_, R>) -> Option<Key> {
        match e.attr_value(dw::DW_AT_type).ok()?? {
            AttributeValue::UnitRef(o) => Some((i, o.0)),
            AttributeValue::DebugInfoRef(o) => {
                let u = &self.units[i].1;
                o.to_unit_offset(&u.header).map(|o| (i, o.0))
            }
            _ => None,
        }
    }

    fn prototype(&mut self, i: usize, off: usize, name: &str) -> Result<Function, DebugError> {
        let mut params = Vec::new();
        let ret;
        {
            let (d, u) = &self.units[i];
            let mut tree = u
                .entries_tree(Some(UnitOffset(off)))
                .map_err(|e| self.files.malformed(e))?;
            let root = tree.root().map_err(|e| self.files.malformed(e))?;
            ret = self.type_ref(i, root.entry());
            let mut kids = root.children();
            while let Some(k) = kids.next().map_err(|e| self.files.malformed(e))? {
                let e = k.entry();
                if e.tag() != dw::DW_TAG_formal_parameter {
                    continue;
                }
                let pname = name_of(d, u, e).unwrap_or_else(|| format!("arg{}", params.len()));
                params.push((pname, self.type_ref(i, e)));
            }
        }
        let mut out = Function {
            name: name.to_string(),
            params: Vec::new(),
            ret: 0,
            ret_name: "void".into(),
        };
        for (n, t) in params {
            let (type_id, type_name) = match t {
                Some(k) => (self.convert(k)?, self.spell(k, 0)),
                None => (0, "void".into()),
            };
            out.params.push(Param {
                name: n,
                type_id,
                type_name,
            });
        }
        if let Some(k) = ret {
            out.ret = self.convert(k)?;
            out.ret_name = self.spell(k, 0);
        }
        Ok(out)
    }

    /// `struct Foo`, `int*`, `const char*`, `char[10]`: the type's C spelling as bpftrace lists it.
    fn spell(&self, k: Key, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "void".into();
        }
        let (d, u) = &self.units[k.0];
        let Ok(e) = u.entry(UnitOffset(k.1)) else {
            return "void".into();
        };
        let inner = |s: &State| match s.type_ref(k.0, &e) {
            Some(t) => s.spell(t, depth + 1),
            None => "void".into(),
        };
        let name = name_of(d, u, &e).unwrap_or_default();
        match e.tag() {
            dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type => {
                format!("{}*", inner(self))
            }
            dw::DW_TAG_const_type => format!("const {}", inner(self)),
            dw::DW_TAG_volatile_type => format!("volatile {}", inner(self)),
            dw::DW_TAG_restrict_type | dw::DW_TAG_atomic_type => inner(self),
            dw::DW_TAG_structure_type | dw::DW_TAG_class_type => format!("struct {name}"),
            dw::DW_TAG_union_type => format!("union {name}"),
            dw::DW_TAG_enumeration_type => format!("enum {name}"),
            dw::DW_TAG_array_type => {
                let mut dims = String::new();
                if let Ok(mut t) = u.entries_tree(Some(UnitOffset(k.1))) {
                    if let Ok(root) = t.root() {
                        let mut kids = root.children();
                        while let Ok(Some(c)) = kids.next() {
                            if c.entry().tag() == dw::DW_TAG_subrange_type {
                                match subrange_len(c.entry()) {
                                    Some(n) => dims.push_str(&format!("[{n}]")),
                                    None => dims.push_str("[]"),
                                }
                            }
                        }
                    }
                }
                format!("{}{dims}", inner(self))
            }
            dw::DW_TAG_subroutine_type => "void (*)()".into(),
            _ if name.is_empty() => "void".into(),
            _ => name,
        }
    }

    /// The BTF id of type entry `k`, converting what it reaches.
    pub fn convert(&mut self, k: Key) -> Result<u32, DebugError> {
        let mut order = Vec::new();
        let mut next = self.builder.next_id();
        self.collect(k, &mut order, &mut next, 0);
        if !order.is_empty() {
            self.snap = None;
        }
        for (key, id) in order {
            self.emit(key, id)?;
        }
        Ok(self.resolve(k, 0))
    }

    fn resolve(&self, k: Key, depth: usize) -> u32 {
        match self.memo.get(&k) {
            Some(Slot::Id(i)) => *i,
            Some(Slot::Alias(t)) if depth < MAX_DEPTH => self.resolve(*t, depth + 1),
            _ => 0,
        }
    }

    fn collect(&mut self, k: Key, order: &mut Vec<(Key, u32)>, next: &mut u32, depth: usize) {
        if self.memo.contains_key(&k) {
            return;
        }
        if depth > MAX_DEPTH {
            self.memo.insert(k, Slot::Void);
            return;
        }
        let mut refs = Vec::new();
        let slot;
        {
            let u = &self.units[k.0].1;
            let Ok(e) = u.entry(UnitOffset(k.1)) else {
                self.memo.insert(k, Slot::Void);
                return;
            };
            let target = self.type_ref(k.0, &e);
            let mut count = 1;
            slot = match e.tag() {
                dw::DW_TAG_base_type
                | dw::DW_TAG_pointer_type
                | dw::DW_TAG_reference_type
                | dw::DW_TAG_rvalue_reference_type
                | dw::DW_TAG_const_type
                | dw::DW_TAG_volatile_type
                | dw::DW_TAG_restrict_type
                | dw::DW_TAG_typedef
                | dw::DW_TAG_enumeration_type => Slot::Id(0),
                dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type => {
                    if let Ok(mut t) = u.entries_tree(Some(UnitOffset(k.1))) {
                        if let Ok(root) = t.root() {
                            let mut kids = root.children();
                            while let Ok(Some(c)) = kids.next() {
                                if c.entry().tag() == dw::DW_TAG_member {
                                    refs.extend(self.type_ref(k.0, c.entry()));
                                }
                            }
                        }
                    }
                    Slot::Id(0)
                }
                dw::DW_TAG_array_type => {
                    count = subranges(u, k.1).len().max(1) as u32;
                    Slot::Id(0)
                }
                dw::DW_TAG_atomic_type | dw::DW_TAG_immutable_type => match target {
                    Some(t) => Slot::Alias(t),
                    None => Slot::Void,
                },
                _ => Slot::Void,
            };
            if matches!(slot, Slot::Id(_)) {
                refs.extend(target);
            }
            if let Slot::Id(_) = slot {
                self.memo.insert(k, Slot::Id(*next));
                order.push((k, *next));
                *next += count;
            }
        }
        match slot {
            Slot::Id(_) => {}
            s => {
                self.memo.insert(k, s);
            }
        }
        if let Slot::Alias(t) = slot {
            refs.push(t);
        }
        for r in refs {
            self.collect(r, order, next, depth + 1);
        }
    }

    fn emit(&mut self, k: Key, id: u32) -> Result<(), DebugError> {
        if self.builder.next_id() != id {
            return Err(self.files.malformed(format!(
                "type at offset {:#x}: BTF id {} expected, {} next",
                k.1,
                id,
                self.builder.next_id()
            )));
        }
        let (d, u) = (&self.units[k.0].0, &self.units[k.0].1);
        let e = u
            .entry(UnitOffset(k.1))
            .map_err(|e| self.files.malformed(e))?;
        let name = name_of(d, u, &e).unwrap_or_default();
        let target = self
            .type_ref(k.0, &e)
            .map(|t| self.resolve(t, 0))
            .unwrap_or(0);
        let size = udata(&e, dw::DW_AT_byte_size).unwrap_or(0) as u32;
        let b = &mut self.builder;
        match e.tag() {
            dw::DW_TAG_base_type => {
                let enc = match e.attr_value(dw::DW_AT_encoding) {
                    Ok(Some(AttributeValue::Encoding(x))) => x,
                    _ => dw::DW_ATE_signed,
                };
                match enc {
                    dw::DW_ATE_float | dw::DW_ATE_complex_float => {
                        b.add_float(&name, size);
                    }
                    _ => {
                        let info = IntInfo {
                            size,
                            bits: (size * 8).min(128) as u8,
                            offset: 0,
                            signed: matches!(enc, dw::DW_ATE_signed | dw::DW_ATE_signed_char),
                            char: matches!(enc, dw::DW_ATE_signed_char | dw::DW_ATE_unsigned_char),
                            bool: enc == dw::DW_ATE_boolean,
                        };
                        b.add_int_info(&name, info);
                    }
                }
            }
            dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type => {
                b.add_ptr(target);
            }
            dw::DW_TAG_const_type => {
                b.add_const(target);
            }
            dw::DW_TAG_volatile_type => {
                b.add_volatile(target);
            }
            dw::DW_TAG_restrict_type => {
                b.add_restrict(target);
            }
            dw::DW_TAG_typedef => {
                b.add_typedef(&name, target);
            }
            dw::DW_TAG_enumeration_type => {
                let mut vals: Vec<(String, i64)> = Vec::new();
                let mut neg = false;
                if let Ok(mut t) = u.entries_tree(Some(UnitOffset(k.1))) {
                    if let Ok(root) = t.root() {
                        let mut kids = root.children();
                        while let Ok(Some(c)) = kids.next() {
                            let ce = c.entry();
                            if ce.tag() != dw::DW_TAG_enumerator {
                                continue;
                            }
                            let v = match ce.attr_value(dw::DW_AT_const_value) {
                                Ok(Some(AttributeValue::Sdata(v))) => v,
                                Ok(Some(v)) => v.udata_value().map(|v| v as i64).unwrap_or(0),
                                _ => 0,
                            };
                            neg |= v < 0;
                            vals.push((name_of(d, u, ce).unwrap_or_default(), v));
                        }
                    }
                }
                let size = if size == 0 { 4 } else { size };
                if vals
                    .iter()
                    .all(|(_, v)| i32::try_from(*v).is_ok() || (!neg && u32::try_from(*v).is_ok()))
                    && size <= 4
                {
                    let vs: Vec<(&str, i32)> =
                        vals.iter().map(|(n, v)| (n.as_str(), *v as i32)).collect();
                    b.add_enum(&name, size, neg, &vs);
                } else {
                    let vs: Vec<(&str, u64)> =
                        vals.iter().map(|(n, v)| (n.as_str(), *v as u64)).collect();
                    b.add_enum64(&name, size, neg, &vs);
                }
            }
            dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type => {
                let union = e.tag() == dw::DW_TAG_union_type;
                if matches!(e.attr_value(dw::DW_AT_declaration), Ok(Some(_))) {
                    b.add_fwd(&name, union);
                    return Ok(());
                }
                let mut ms: Vec<(String, u32, u32, u32)> = Vec::new();
                if let Ok(mut t) = u.entries_tree(Some(UnitOffset(k.1))) {
                    if let Ok(root) = t.root() {
                        let mut kids = root.children();
                        while let Ok(Some(c)) = kids.next() {
                            let ce = c.entry();
                            if ce.tag() != dw::DW_TAG_member {
                                continue;
                            }
                            let Some(mt) = self.type_ref(k.0, ce) else {
                                continue;
                            };
                            let loc = udata(ce, dw::DW_AT_data_member_location).unwrap_or(0) as u32;
                            let bits = udata(ce, dw::DW_AT_bit_size).unwrap_or(0) as u32;
                            let bit_off = match udata(ce, dw::DW_AT_data_bit_offset) {
                                Some(o) => o as u32,
                                None if bits > 0 => {
                                    // DWARF 2/3: bit offset from the storage unit's high end.
                                    let storage =
                                        udata(ce, dw::DW_AT_byte_size).unwrap_or(4) as u32;
                                    let hi = udata(ce, dw::DW_AT_bit_offset).unwrap_or(0) as u32;
                                    (loc * 8 + storage * 8).saturating_sub(hi + bits)
                                }
                                None => loc * 8,
                            };
                            ms.push((
                                name_of(d, u, ce).unwrap_or_default(),
                                mt.1 as u32,
                                bit_off,
                                bits,
                            ));
                        }
                    }
                }
                let ids: Vec<u32> = ms
                    .iter()
                    .map(|m| self.resolve((k.0, m.1 as usize), 0))
                    .collect();
                let defs: Vec<MemberDef<'_>> = ms
                    .iter()
                    .zip(&ids)
                    .map(|(m, &t)| {
                        if m.3 > 0 {
                            MemberDef::bitfield(&m.0, t, m.2, m.3)
                        } else {
                            MemberDef {
                                name: &m.0,
                                type_id: t,
                                bit_offset: m.2,
                                bitfield_size: 0,
                            }
                        }
                    })
                    .collect();
                let b = &mut self.builder;
                if union {
                    b.add_union(&name, size, &defs);
                } else {
                    b.add_struct(&name, size, &defs);
                }
            }
            dw::DW_TAG_array_type => {
                let dims = subranges(u, k.1);
                let dims = if dims.is_empty() { vec![None] } else { dims };
                let n = dims.len() as u32;
                let index = self.index_type;
                for (j, len) in dims.iter().enumerate() {
                    let j = j as u32;
                    let elem = if j + 1 < n { id + j + 1 } else { target };
                    self.builder.add_array(elem, index, len.unwrap_or(0) as u32);
                }
            }
            _ => {
                return Err(self
                    .files
                    .malformed(format!("type at offset {:#x} has no BTF form", k.1)));
            }
        }
        Ok(())
    }

    /// Scans unit `i`'s top-level named types into the name index.
    fn scan_names(&mut self, i: usize) {
        if !self.scanned.insert(i) {
            return;
        }
        let (d, u) = &self.units[i];
        let Ok(mut t) = u.entries_tree(None) else {
            return;
        };
        let Ok(root) = t.root() else { return };
        let mut kids = root.children();
        let mut found = Vec::new();
        while let Ok(Some(c)) = kids.next() {
            let e = c.entry();
            let kind = match e.tag() {
                dw::DW_TAG_structure_type | dw::DW_TAG_class_type => TypeKind::Struct,
                dw::DW_TAG_union_type => TypeKind::Union,
                dw::DW_TAG_enumeration_type => TypeKind::Enum,
                dw::DW_TAG_typedef => TypeKind::Typedef,
                _ => continue,
            };
            if matches!(e.attr_value(dw::DW_AT_declaration), Ok(Some(_))) {
                continue;
            }
            if let Some(n) = name_of(d, u, e) {
                found.push(((kind, n), (i, e.offset().0)));
            }
        }
        for (k, v) in found {
            self.names.entry(k).or_insert(v);
        }
    }

    pub fn find_type(&mut self, kind: TypeKind, name: &str) -> Result<Option<u32>, DebugError> {
        let key = (kind, name.to_string());
        // Units already loaded first (a function's unit usually defines its types).
        for i in 0..self.units.len() {
            self.scan_names(i);
        }
        if !self.names.contains_key(&key) {
            for off in self.unit_offsets()? {
                let i = self.load_unit(off)?;
                self.scan_names(i);
                if self.names.contains_key(&key) {
                    break;
                }
            }
        }
        match self.names.get(&key).copied() {
            Some(k) => self.convert(k).map(Some),
            None => Ok(None),
        }
    }
}

fn subrange_len(e: &gimli::DebuggingInformationEntry<'_, '_, R>) -> Option<u64> {
    if let Some(c) = udata(e, dw::DW_AT_count) {
        return Some(c);
    }
    match e.attr_value(dw::DW_AT_upper_bound).ok()?? {
        AttributeValue::Sdata(v) if v >= 0 => Some(v as u64 + 1),
        AttributeValue::Sdata(_) => Some(0),
        v => v.udata_value().map(|v| v + 1),
    }
}

/// The lengths of an array type's dimensions (`None`: unbounded).
fn subranges(u: &Unit<R>, off: usize) -> Vec<Option<u64>> {
    let mut out = Vec::new();
    if let Ok(mut t) = u.entries_tree(Some(UnitOffset(off))) {
        if let Ok(root) = t.root() {
            let mut kids = root.children();
            while let Ok(Some(c)) = kids.next() {
                if c.entry().tag() == dw::DW_TAG_subrange_type {
                    out.push(subrange_len(c.entry()));
                }
            }
        }
    }
    out
}
