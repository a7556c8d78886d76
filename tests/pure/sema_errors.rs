//! Table-driven test of invalid scripts: each row is a script and its first error as
//! `line:col: message`, checked against the mock kernel (tests must not depend on the host's
//! BTF). Rows cover map/variable typing, aggregations, builtins per probe kind, BTF and
//! tracepoint fields, printf formats, casts, literals, scoping, macros, functions, unsafe
//! builtins and target expansion.

use crate::sema_support;

use sema_support::first_error;

const CASES: &[(&str, &str)] = &[
    (
        r#"BEGIN { printf("%d\n", $x); }"#,
        r#"1:24: Undefined or undeclared variable: $x"#,
    ),
    (
        r#"BEGIN { $x = 1; $x = "str"; }"#,
        r#"1:22: Type mismatch for $x: trying to assign value of type 'string[4]' when variable already contains a value of type 'int8'"#,
    ),
    (
        r#"BEGIN { @x = 1; @x = "str"; }"#,
        r#"1:22: Type mismatch for @x: trying to assign value of type 'string[4]' when map already contains a value of type 'int64'"#,
    ),
    (
        r#"BEGIN { @x[1] = 1; @x["a"] = 2; }"#,
        r#"1:20: Argument mismatch for @x: trying to access with arguments: 'string[2]' when map expects arguments: 'int8'"#,
    ),
    (
        r#"BEGIN { @x[1] = 1; @x[1, 2] = 2; }"#,
        r#"1:20: Argument mismatch for @x: trying to access with arguments: '(int8,int8)' when map expects arguments: 'int8'"#,
    ),
    (
        r#"BEGIN { @x = 1; @x[1] = 2; }"#,
        r#"1:17: @x used as a map with keys [int8], but it is a map without keys"#,
    ),
    (
        r#"BEGIN { $x = count(); }"#,
        r#"1:14: count() should be directly assigned to a map"#,
    ),
    (
        r#"BEGIN { printf("%d\n", count()); }"#,
        r#"1:24: count() should be directly assigned to a map"#,
    ),
    (
        r#"BEGIN { @x = count(); @x = sum(5); }"#,
        r#"1:28: Type mismatch for @x: trying to assign value of type 'sum_t' when map already contains a value of type 'count_t'"#,
    ),
    (
        r#"BEGIN { $n = "x"; print(getopt($n)); }"#,
        r#"1:32: First argument to 'getopt' must be a string literal."#,
    ),
    (
        r#"BEGIN { print(getopt("n", 1 + 2)); }"#,
        r#"1:27: Second argument to 'getopt' must be a string literal, integer literal, or a boolean literal."#,
    ),
    (
        r#"BEGIN { print(getopt("n", 1)); print(getopt("n", 2)); }"#,
        r#"1:38: Command line option 'n' needs to have the same default value in all places it is used. Previous default value: 1"#,
    ),
    (
        r#"kprobe:vfs_read { @x = path(arg0); }"#,
        r#"1:24: path() is not available in kprobe probes"#,
    ),
    (
        r#"fentry:vfs_read { @x = path(args.count); }"#,
        r#"1:29: path() only supports pointer or record argument (uint64 provided)"#,
    ),
    (
        r#"fentry:vfs_read { @x = path(args.file, 5000); }"#,
        r#"1:40: path: size 5000 must be between 1 and 4096"#,
    ),
    (
        r#"fentry:vfs_read { @x = retval; }"#,
        r#"1:24: retval is not available in fentry probes"#,
    ),
    (
        r#"kprobe:vfs_read { @x = retval; }"#,
        r#"1:24: retval is not available in kprobe probes"#,
    ),
    (
        r#"kprobe:vfs_read { @x = args.count; }"#,
        r#"1:24: args is not available in kprobe probes"#,
    ),
    (
        r#"BEGIN { @x = args.count; }"#,
        r#"1:14: args is not available in begin probes"#,
    ),
    (
        r#"tracepoint:syscalls:sys_enter_openat { @x = arg0; }"#,
        r#"1:45: argN is not available in tracepoint probes"#,
    ),
    (
        r#"fentry:vfs_read { @x = arg0; }"#,
        r#"1:24: argN is not available in fentry probes"#,
    ),
    (
        r#"BEGIN { @x = func; }"#,
        r#"1:14: func is not available in begin probes"#,
    ),
    (r#"BEGIN { foo(); }"#, r#"1:9: Unknown function: 'foo'"#),
    (
        r#"BEGIN { prinft("x"); }"#,
        r#"1:9: Unknown function: 'prinft'"#,
    ),
    (
        r#"BEGIN { @x = coutn(); }"#,
        r#"1:14: Unknown function: 'coutn'"#,
    ),
    (
        r#"BEGIN { @x = pdi; }"#,
        r#"1:14: Unknown identifier: 'pdi'"#,
    ),
    (
        r#"BEGIN { @x = nosuchthing; }"#,
        r#"1:14: Unknown identifier: 'nosuchthing'"#,
    ),
    (
        r#"fentry:vfs_read { @x = args.cout; }"#,
        r#"1:29: fentry:vmlinux:vfs_read has no argument named 'cout'"#,
    ),
    (
        r#"fentry:vfs_read { @x = args.nope; }"#,
        r#"1:29: fentry:vmlinux:vfs_read has no argument named 'nope'"#,
    ),
    (
        r#"tracepoint:syscalls:sys_enter_openat { @x = args.filenam; }"#,
        r#"1:50: tracepoint:syscalls:sys_enter_openat has no argument named 'filenam'"#,
    ),
    (
        r#"tracepoint:syscalls:sys_enter_openat { @x = args.nope; }"#,
        r#"1:50: tracepoint:syscalls:sys_enter_openat has no argument named 'nope'"#,
    ),
    (
        r#"rawtracepoint:sched_switch { @x = args.prevv; }"#,
        r#"1:40: rawtracepoint:vmlinux:sched_switch has no argument named 'prevv'"#,
    ),
    (
        r#"fentry:vfs_read { @x = args.file->f_nope; }"#,
        r#"1:35: Struct/union of type 'struct file' does not contain a field named 'f_nope'"#,
    ),
    (
        r#"fentry:vfs_read { @x = args.file.f_inodee; }"#,
        r#"1:34: Struct/union of type 'struct file' does not contain a field named 'f_inodee'"#,
    ),
    (
        r#"BEGIN { @x = ((struct task_struct *)curtask)->pidd; }"#,
        r#"1:47: Struct/union of type 'struct task_struct' does not contain a field named 'pidd'"#,
    ),
    (
        r#"BEGIN { @x = curtask->nope; }"#,
        r#"1:23: Struct/union of type 'struct task_struct' does not contain a field named 'nope'"#,
    ),
    (
        r#"BEGIN { printf("%d\n"); }"#,
        r#"1:9: printf: not enough arguments for format string (0 supplied, 1 expected)"#,
    ),
    (
        r#"BEGIN { printf("%d\n", 1, 2); }"#,
        r#"1:9: printf: too many arguments for format string (2 supplied, 1 expected)"#,
    ),
    (
        r#"BEGIN { printf("%d\n", "str"); }"#,
        r#"1:24: printf: format specifier 1 expects an integer, but argument 1 has type 'string[4]'"#,
    ),
    (
        r#"BEGIN { printf("%s %s\n", 1); }"#,
        r#"1:9: printf: not enough arguments for format string (1 supplied, 2 expected)"#,
    ),
    (
        r#"BEGIN { $f = "x"; printf($f); }"#,
        r#"1:26: printf() expects a string literal as its first argument"#,
    ),
    (
        r#"BEGIN { printf("%r\n", 5); }"#,
        r#"1:24: printf: format specifier 1 expects a buffer, but argument 1 has type 'int64'"#,
    ),
    (
        r#"BEGIN { system("ls"); }"#,
        r#"1:9: system() is an unsafe function being used in safe mode"#,
    ),
    (
        r#"BEGIN { signal(9); }"#,
        r#"1:9: signal() is an unsafe function being used in safe mode"#,
    ),
    (
        r#"kprobe:vfs_read { override(0); }"#,
        r#"1:19: override() is an unsafe function being used in safe mode"#,
    ),
    (
        r#"BEGIN { @x = hist(1, 9); }"#,
        r#"1:22: hist: bits 9 must be between 0 and 5"#,
    ),
    (
        r#"BEGIN { @x = lhist(1, 0, 100, 0); }"#,
        r#"1:31: lhist() step must be >= 1"#,
    ),
    (
        r#"BEGIN { @x = lhist(1, 100, 0, 10); }"#,
        r#"1:28: lhist() min must be less than max"#,
    ),
    (
        r#"BEGIN { $n = 5; @x = lhist(1, 0, $n, 1); }"#,
        r#"1:34: lhist: max must be an integer literal"#,
    ),
    (
        r#"BEGIN { @x = hist("str"); }"#,
        r#"1:19: hist() expects an integer argument, got string[4]"#,
    ),
    (
        r#"BEGIN { @x = sum("str"); }"#,
        r#"1:18: sum() expects an integer argument, got string[4]"#,
    ),
    (
        r#"BEGIN { @x = count(1); }"#,
        r#"1:14: count() takes 0 arguments, 1 given"#,
    ),
    (
        r#"BEGIN { exit(1, 2); }"#,
        r#"1:9: exit() takes 0 to 1 arguments, 2 given"#,
    ),
    (
        r#"BEGIN { @x = str(); }"#,
        r#"1:14: str() takes 1 to 2 arguments, 0 given"#,
    ),
    (
        r#"BEGIN { @x = 1 + "a"; }"#,
        r#"1:14: Type mismatch for '+': 'int64' and 'string[2]'"#,
    ),
    (
        r#"BEGIN { @x = "a" < "b"; }"#,
        r#"1:14: Type mismatch for '<': comparing 'string[2]' with 'string[2]'"#,
    ),
    (
        r#"BEGIN { @x = 1 ? 2 : "a"; }"#,
        r#"1:14: Ternary operator must return the same type: have 'int64' and 'string[2]'"#,
    ),
    (
        r#"BEGIN { $t = (1, 2); @x = $t.2; }"#,
        r#"1:27: Invalid tuple index: 2. Found 2 elements in tuple."#,
    ),
    (
        r#"BEGIN { $x = 5; @y = $x.foo; }"#,
        r#"1:25: Can not access field 'foo' on expression of type 'int8'"#,
    ),
    (
        r#"BEGIN { $x = 5; @y = $x[1]; }"#,
        r#"1:22: The array index operator [] can only be used on arrays and pointers, found int8"#,
    ),
    (
        r#"BEGIN { @x = *1; $p = (void *)0; @y = *$p; }"#,
        r#"1:39: Can not dereference type 'void *'"#,
    ),
    (
        r#"BEGIN { $p = (int8 *)0; @y = $p->x; }"#,
        r#"1:34: Can not access field 'x' on type 'int8 *'"#,
    ),
    (
        r#"BEGIN { @x = (struct file)0; }"#,
        r#"1:14: Cannot cast to struct type 'struct file'"#,
    ),
    (
        r#"BEGIN { @x = (struct nosuch *)0; }"#,
        r#"1:15: Unknown type: 'struct nosuch'"#,
    ),
    (
        r#"BEGIN { @x = (nosuchtype)0; }"#,
        r#"1:15: Unknown type: 'nosuchtype'"#,
    ),
    (
        r#"BEGIN { let $x: uint8 = 300; }"#,
        r#"1:25: Integer 300 does not fit in $x of type 'uint8'"#,
    ),
    (
        r#"BEGIN { let $x = 1; let $x = 2; }"#,
        r#"1:25: Variable $x was already declared in this scope"#,
    ),
    (
        r#"BEGIN { if (1) { let $x = 1; } printf("%d\n", $x); }"#,
        r#"1:47: Undefined or undeclared variable: $x"#,
    ),
    (
        r#"BEGIN { for ($i : 0..3) { } @x = $i; }"#,
        r#"1:34: Undefined or undeclared variable: $i"#,
    ),
    (
        r#"BEGIN { break; }"#,
        r#"1:9: 'break' used outside of a loop"#,
    ),
    (
        r#"BEGIN { continue; }"#,
        r#"1:9: 'continue' used outside of a loop"#,
    ),
    (r#"BEGIN { @x = @y; }"#, r#"1:14: Undefined map: @y"#),
    (
        r#"BEGIN { print(@never); }"#,
        r#"1:15: Undefined map: @never"#,
    ),
    (
        r#"BEGIN { $x++; }"#,
        r#"1:9: Undefined or undeclared variable: $x"#,
    ),
    (r#"BEGIN { @x = 1 / 0; }"#, r#"1:18: Division by zero"#),
    (
        r#"config = { max_strlen = 64 } BEGIN { @x = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"; }"#,
        r#"1:43: String literal is too long: 78 bytes (with the NUL) > max_strlen 64"#,
    ),
    (
        r#"BEGIN { @x = strncmp("a", 1, 1); }"#,
        r#"1:27: strncmp() expects string arguments, got int64"#,
    ),
    (
        r#"BEGIN { @x = strftime(1, nsecs); }"#,
        r#"1:23: strftime: the format must be a string literal"#,
    ),
    (
        r#"BEGIN { @x = kaddr(1); }"#,
        r#"1:20: kaddr: the symbol name must be a string literal"#,
    ),
    (
        r#"kprobe:vfs_read { @x = reg("nope"); }"#,
        r#"1:24: 'nope' is not a valid register on this architecture (x86_64)"#,
    ),
    (
        r#"BEGIN { @x = reg("ip"); }"#,
        r#"1:14: reg() is not available in begin probes"#,
    ),
    (
        r#"BEGIN { @x = kstack(bogus); }"#,
        r#"1:21: kstack: invalid mode 'bogus' (bpftrace, perf, raw, build_id)"#,
    ),
    (
        r#"BEGIN { @x = kstack(5000); }"#,
        r#"1:21: kstack: limit 5000 must be between 0 and 1024"#,
    ),
    (
        r#"BEGIN { @x = ntop(1, 2, 3); }"#,
        r#"1:14: ntop() takes 1 to 2 arguments, 3 given"#,
    ),
    (
        r#"BEGIN { clear(1); }"#,
        r#"1:15: clear() expects a map argument"#,
    ),
    (
        r#"BEGIN { @x[1] = 1; delete(@x, "a"); }"#,
        r#"1:31: Argument mismatch for @x: trying to access with arguments: 'string[2]' when map expects arguments: 'int8'"#,
    ),
    (
        r#"BEGIN { @x[1, 2] = 1; delete(@x, 1); }"#,
        r#"1:34: Argument mismatch for @x: trying to access with arguments: 'int8' when map expects arguments: '(int8,int8)'"#,
    ),
    (
        r#"BEGIN { @x[1, 2] = 1; delete(@x); }"#,
        r#"1:30: @x used without keys, but its keys are [int8, int8]"#,
    ),
    (
        r#"BEGIN { $t = (1, "a"); @x[$t] = 1; @y = @x[1, 2]; }"#,
        r#"1:41: Argument mismatch for @x: trying to access with arguments: '(int8,int8)' when map expects arguments: '(int8,string[2])'"#,
    ),
    (
        r#"BEGIN { @x[1, 2] = 1; @y = @x[(1, 2, 3)]; }"#,
        r#"1:28: Argument mismatch for @x: trying to access with arguments: '(int8,int8,int8)' when map expects arguments: '(int8,int8)'"#,
    ),
    (
        r#"BEGIN { @x = ppid(1); }"#,
        r#"1:19: ppid() expects a 'struct task_struct *' argument, got int64"#,
    ),
    (
        r#"BEGIN { @x = pcomm(curtask, 1); }"#,
        r#"1:14: pcomm() takes 0 to 1 arguments, 2 given"#,
    ),
    (
        r#"BEGIN { @x[1] = 1; @y = has_key(@x, "a"); }"#,
        r#"1:37: Argument mismatch for @x: trying to access with arguments: 'string[2]' when map expects arguments: 'int8'"#,
    ),
    (
        r#"fentry:nosuchfunc { }"#,
        r#"1:1: No matches for fentry nosuchfunc."#,
    ),
    (
        r#"tracepoint:syscalls:nosuch { }"#,
        r#"1:1: No matches for tracepoint syscalls:nosuch."#,
    ),
    (
        r#"tracepoint:nosuchcat:* { }"#,
        r#"1:1: No matches for tracepoint nosuchcat:*."#,
    ),
    (
        r#"rawtracepoint:nosuch { }"#,
        r#"1:1: No matches for rawtracepoint nosuch."#,
    ),
    (
        r#"uprobe:/nonexistent/bin:main { }"#,
        r#"1:1: uprobe:/nonexistent/bin:main: cannot find binary '/nonexistent/bin'"#,
    ),
    (
        r#"uprobe:/bin/bash:nosuch* { }"#,
        r#"1:1: No matches for uprobe /bin/bash:nosuch*."#,
    ),
    (
        r#"usdt:/usr/lib/libc.so.6:libc:nosuch { }"#,
        r#"1:1: No matches for usdt /usr/lib/libc.so.6:libc:nosuch."#,
    ),
    (
        r#"fentry:vmlinux:vfs_read, kprobe:vfs_read { @x = args.count; }"#,
        r#"1:49: args is not available in kprobe probes"#,
    ),
    (
        r#"BEGIN { @x[kstack(bogus2)] = 1; }"#,
        r#"1:12: A value of type 'none' cannot be used as a map key"#,
    ),
    (
        r#"let @m = hashx(10); BEGIN { @m[1] = 1; }"#,
        r#"1:10: unknown map kind 'hashx' (known: hash, lruhash, percpuhash, percpulruhash, percpuarray, array)"#,
    ),
    (
        r#"macro add(x) { x + 1 } BEGIN { @x = add(1, 2); }"#,
        r#"1:37: Macro 'add' takes 1 arguments, 2 given"#,
    ),
    (
        r#"macro inc($v) { $v + 1 } BEGIN { @x = inc(5); }"#,
        r#"1:43: Macro 'inc' expects a variable for $v"#,
    ),
    (
        r#"fn f($a: int64): int64 { return "s"; } BEGIN { @x = f(1); }"#,
        r#"1:26: Function returns 'string[2]', but its declared return type is 'int64'"#,
    ),
    (
        r#"fn f($a: int64): int64 { return $a; } BEGIN { @x = f("s"); }"#,
        r#"1:54: Function 'f': argument $a expects 'int64', got 'string[2]'"#,
    ),
    (
        r#"fn f($a: int64): int64 { return $a; } BEGIN { @x = f(1, 2); }"#,
        r#"1:52: Function 'f' takes 1 arguments, 2 given"#,
    ),
    (
        r#"fn f($a: int64): int64 { return retval; } BEGIN { @x = f(1); }"#,
        r#"1:33: retval cannot be used in a function"#,
    ),
    (
        r#"BEGIN { @x = 1 && "a"; }"#,
        r#"1:14: Type mismatch for '&&': 'int64' and 'string[2]'"#,
    ),
    (
        r#"BEGIN { while ("a") { } }"#,
        r#"1:16: Invalid type for loop condition: string[2]"#,
    ),
    (
        r#"BEGIN { unroll(0) { } }"#,
        r#"1:16: unroll minimum value is 1 (got 0)"#,
    ),
    (
        r#"BEGIN { $a = 1; unroll($a) { } }"#,
        r#"1:24: unroll count must be an integer literal"#,
    ),
    (
        r#"BEGIN { @x = (int8[4])"abcd"; }"#,
        r#"1:14: Cannot cast from 'string[5]' to 'int8[4]'"#,
    ),
    (
        r#"BEGIN { @x = -"a"; }"#,
        r#"1:14: The - operator can not be used on expressions of type 'string[2]'"#,
    ),
    (
        r#"BEGIN { @x = !"a"; }"#,
        r#"1:14: The ! operator can not be used on expressions of type 'string[2]'"#,
    ),
    (
        r#"BEGIN { $x = 1; $y = $x + comm; }"#,
        r#"1:22: Type mismatch for '+': 'int8' and 'string[16]'"#,
    ),
    (
        r#"BEGIN { @x = cgroupid(5); }"#,
        r#"1:23: cgroupid: the cgroup path must be a string literal"#,
    ),
    (
        r#"BEGIN { @x = join(5, 5); }"#,
        r#"1:22: join: the separator must be a string literal"#,
    ),
    (
        r#"BEGIN { $r = (a = 1, b = 2); @x = $r.c; }"#,
        r#"1:38: Record has no field named 'c'"#,
    ),
    (
        r#"BEGIN {
  @x = 1;
  @x = "str";
}"#,
        r#"3:8: Type mismatch for @x: trying to assign value of type 'string[4]' when map already contains a value of type 'int64'"#,
    ),
    (
        r#"fentry:vfs_read {
  @bytes[comm] = sum(args.cnt);
}"#,
        r#"2:27: fentry:vmlinux:vfs_read has no argument named 'cnt'"#,
    ),
    (
        r#"BEGIN
{
  if (1) {
    let $x = 1;
  }
  print($x);
}"#,
        r#"6:9: Undefined or undeclared variable: $x"#,
    ),
    (
        r#"kprobe:vfs_read {
  @start[tid] = nsecs;
}
kretprobe:vfs_read {
  @lat = hist(nsecs - @start[pid, 1]);
}"#,
        r#"5:23: Argument mismatch for @start: trying to access with arguments: '(uint32,int8)' when map expects arguments: 'uint32'"#,
    ),
    // `&` of what has no address (the parser accepts any operand, as for `*`).
    (
        r#"BEGIN { $x = &1; }"#,
        r#"1:14: Can not take the address of a literal: it has no address"#,
    ),
    (
        r#"BEGIN { $x = &pid; }"#,
        r#"1:14: Can not take the address of builtin 'pid': it has no address"#,
    ),
    (
        r#"BEGIN { $x = &strftime("%H", nsecs); }"#,
        r#"1:14: Can not take the address of the result of strftime(): it has no address"#,
    ),
    (
        r#"BEGIN { $x = &($y + 1); }"#,
        r#"1:16: Undefined or undeclared variable: $y"#,
    ),
    (
        r#"BEGIN { $y = 1; $x = &($y + 1); }"#,
        r#"1:22: Can not take the address of this expression: it has no address"#,
    ),
    (
        r#"BEGIN { @b[1] = 1; $x = &@b; }"#,
        r#"1:25: Can not take the address of map @b: it has keys, take the address of one value with &@b[key]"#,
    ),
    (
        r#"BEGIN { @c = count(); $x = &@c; }"#,
        r#"1:28: Can not take the address of @c: an aggregation's value is per-CPU"#,
    ),
    (
        r#"BEGIN { $t = (a = 1, b = 2); $x = &$t.a; }"#,
        r#"1:35: Can not take the address of field 'a' of a record: only struct members have an address"#,
    ),
    (
        r#"fentry:vfs_read { $x = &args.count; }"#,
        r#"1:24: Can not take the address of field 'count' of args: only struct members have an address"#,
    ),
    (
        r#"struct Foo { int a:3; int b; } BEGIN { $p = (struct Foo *)0; $x = &$p->a; }"#,
        r#"1:67: Can not take the address of bitfield 'a'"#,
    ),
    (
        r#"BEGIN { $x = &curtask->nosuch; }"#,
        r#"1:24: Struct/union of type 'struct task_struct' does not contain a field named 'nosuch'"#,
    ),
];

#[test]
fn each_invalid_script_reports_its_exact_first_error() {
    assert!(CASES.len() >= 80, "only {} cases", CASES.len());
    let mut failures = Vec::new();
    for (script, want) in CASES {
        let got = first_error(script);
        if got != *want {
            failures.push(format!(
                "script: {script}
  want: {want}
   got: {got}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
