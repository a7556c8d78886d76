use super::*;

fn one(text: &str) -> Case {
    let mut cases = parse_str("suite", text).expect("parses");
    assert_eq!(cases.len(), 1);
    cases.remove(0)
}

fn err(text: &str) -> CaseError {
    parse_str("suite", text).expect_err("must be rejected")
}

#[test]
fn blank_lines_separate_cases_and_comments_are_ignored() {
    let cases = parse_str(
        "basic",
        "# leading comment\nNAME first\nRUN true\n# inside\nEXPECT a\n\n\nNAME second\nPROG BEGIN { exit(); }\nEXPECT_REGEX ^b+$\nTIMEOUT 2.5\n",
    )
    .unwrap();
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].id(), "basic.first");
    assert_eq!(cases[0].line, 2);
    assert_eq!(cases[0].action, Action::Run("true".into()));
    assert_eq!(cases[1].action, Action::Prog("BEGIN { exit(); }".into()));
    assert_eq!(cases[1].timeout, Duration::from_millis(2500));
    assert_eq!(cases[1].line, 8);
}

#[test]
fn last_case_without_trailing_newline_is_kept() {
    let c = one("NAME n\nRUN true\nEXPECT x");
    assert!(matches!(&c.expects[0], Expect::Lines(l) if l == &["x".to_string()]));
}

#[test]
fn continuation_lines_extend_prog_and_expect() {
    let c = one(
        "NAME multi\nPROG BEGIN {\n       printf(\"hi\");\n     }\nEXPECT hello!\n       world!\n",
    );
    assert_eq!(
        c.action,
        Action::Prog("BEGIN {\n  printf(\"hi\");\n}".into())
    );
    assert!(
        matches!(&c.expects[0], Expect::Lines(l) if l == &["hello!".to_string(), "world!".to_string()])
    );
}

#[test]
fn continuation_keeps_indentation_beyond_the_value_column() {
    let c = parse_str(
        "s",
        "NAME m\nPROG a {\n       b;\n         c;\n     }\nEXPECT x\n",
    )
    .unwrap();
    assert_eq!(c[0].action, Action::Prog("a {\n  b;\n    c;\n}".into()));
}

#[test]
fn multi_line_expect_needs_consecutive_lines() {
    let c = one("NAME m\nRUN true\nEXPECT hello!\n       world!\n");
    let e = &c.expects[0];
    assert!(e.holds("x\n  hello!  \nworld!\n"));
    assert!(!e.holds("hello!\nx\nworld!\n"));
    assert!(!e.holds("world!\nhello!\n"));
}

#[test]
fn expectations_match_whole_lines_and_regexes_per_line() {
    let c = one("NAME e\nRUN true\nEXPECT fentry: yes\nEXPECT_NONE error\nEXPECT_REGEX ^kprobes: (yes|no)$\nEXPECT_REGEX_NONE panic\n");
    let out = "fentry: yes\nkprobes: no\nno errors here\n";
    assert!(c.expects.iter().all(|e| e.holds(out)), "{out}");
    assert!(!c.expects[0].holds("fentry: yes, mostly\n"));
    assert!(!c.expects[1].holds("  error \n"));
    assert!(!c.expects[2].holds("x kprobes: yes\n"));
    assert!(!c.expects[3].holds("Kernel panic - not syncing\n"));
}

#[test]
fn all_directives_are_read() {
    let c = one(concat!(
        "NAME all of them\n",
        "RUN {{STROBE}} info\n",
        "EXPECT ok\n",
        "BEFORE sleep 10\n",
        "BEFORE sleep 11\n",
        "AFTER cat /etc/passwd\n",
        "SETUP touch /tmp/x\n",
        "CLEANUP rm /tmp/x\n",
        "REQUIRES test -e /sys/kernel/btf/vmlinux\n",
        "REQUIRES true\n",
        "ENV A=1 B=two=2\n",
        "WILL_FAIL\n",
        "KERNELS 6.1 6.12\n",
        "MIN_KERNEL 5.15\n",
    ));
    assert_eq!(c.name, "all of them");
    assert_eq!(c.befores, ["sleep 10", "sleep 11"]);
    assert_eq!(c.after.as_deref(), Some("cat /etc/passwd"));
    assert_eq!(c.setup.as_deref(), Some("touch /tmp/x"));
    assert_eq!(c.cleanup.as_deref(), Some("rm /tmp/x"));
    assert_eq!(c.requires.len(), 2);
    assert_eq!(
        c.env,
        [("A".into(), "1".into()), ("B".into(), "two=2".into())]
    );
    assert!(c.will_fail);
    let k = c.kernels.unwrap();
    use crate::kernels::KernelVersion;
    assert!(k.matches(&KernelVersion::parse("6.12.117").unwrap()));
    assert!(!k.matches(&KernelVersion::parse("5.10.0").unwrap()));
}

#[test]
fn return_code_alone_is_an_expectation() {
    let c = one("NAME rc\nRUN exit 3\nRETURN_CODE 3\n");
    assert_eq!(c.return_code, 3);
    assert!(c.expects.is_empty());
}

#[test]
fn unknown_directive_is_named_with_a_suggestion_and_line() {
    let e = err("NAME x\nRUN true\nEXPECT_REGX a\n");
    assert_eq!(e.line, 3);
    assert!(
        matches!(&e.kind, CaseErrorKind::UnknownDirective { name, suggestion: Some(s) } if name == "EXPECT_REGX" && s == "EXPECT_REGEX"),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "suite:3: unknown directive `EXPECT_REGX` (did you mean `EXPECT_REGEX`?)"
    );
}

#[test]
fn structural_mistakes_are_rejected() {
    assert!(matches!(
        err("RUN true\nEXPECT a\n").kind,
        CaseErrorKind::MissingName
    ));
    assert!(matches!(
        err("NAME a\nEXPECT a\n").kind,
        CaseErrorKind::MissingAction { .. }
    ));
    assert!(matches!(
        err("NAME a\nRUN x\nPROG y\nEXPECT a\n").kind,
        CaseErrorKind::BothActions { .. }
    ));
    assert!(matches!(
        err("NAME a\nRUN x\n").kind,
        CaseErrorKind::NothingExpected { .. }
    ));
    assert!(matches!(
        err("NAME a\nRUN x\nWILL_FAIL\nRETURN_CODE 2\n").kind,
        CaseErrorKind::WillFailWithReturnCode { .. }
    ));
    assert!(matches!(
        err("NAME a\nRUN x\nEXPECT a\n\nNAME a\nRUN y\nEXPECT b\n").kind,
        CaseErrorKind::DuplicateName { .. }
    ));
    assert!(matches!(
        err("  indented first\n").kind,
        CaseErrorKind::StrayContinuation
    ));
    assert!(matches!(
        err("NAME a\nRUN x\n  more\nEXPECT a\n").kind,
        CaseErrorKind::StrayContinuation
    ));
}

#[test]
fn bad_values_are_rejected_with_their_line() {
    let e = err("NAME a\nRUN x\nEXPECT a\nTIMEOUT soon\n");
    assert_eq!(e.line, 4);
    assert!(matches!(e.kind, CaseErrorKind::BadValue { .. }));
    assert!(matches!(
        err("NAME a\nRUN x\nEXPECT a\nTIMEOUT -1\n").kind,
        CaseErrorKind::BadValue { .. }
    ));
    assert!(matches!(
        err("NAME a\nRUN x\nEXPECT_REGEX (\n").kind,
        CaseErrorKind::BadRegex { .. }
    ));
    assert!(matches!(
        err("NAME a\nRUN x\nEXPECT a\nENV novalue\n").kind,
        CaseErrorKind::BadValue { .. }
    ));
    assert!(matches!(
        err("NAME a\nRUN x\nEXPECT a\nKERNELS >= x\n").kind,
        CaseErrorKind::BadKernels(_)
    ));
    assert!(matches!(
        err("NAME a\nRUN\nEXPECT a\n").kind,
        CaseErrorKind::MissingValue { .. }
    ));
}

#[test]
fn missing_file_is_an_io_error_naming_the_suite() {
    let e = parse_file(Path::new("/nonexistent/dir/probes.case")).unwrap_err();
    assert_eq!(e.suite, "probes");
    assert!(matches!(e.kind, CaseErrorKind::Io(_)));
}

#[test]
fn exact_block_keeps_blank_lines_and_trailing_spaces() {
    let c = one("NAME e\nPROG BEGIN { exit(); }\nEXPECT_EXACT |\n             |\n   |@x: 1  \n# comment\n\t|last\n");
    assert_eq!(c.exact_stdout(), Some("\n\n@x: 1  \nlast\n"));
    assert!(c.expects[0].holds("\n\n@x: 1  \nlast\n"));
    assert!(!c.expects[0].holds("\n@x: 1  \nlast\n"));
    assert!(!c.expects[0].holds("\n\n@x: 1\nlast\n"));
    let c = one("NAME e\nPROG x\nEXPECT_EXACT\n  |a\n");
    assert_eq!(c.exact_stdout(), Some("a\n"));
    let c = one("NAME e\nPROG x\nEXPECT_EXACT\n");
    assert_eq!(c.exact_stdout(), Some(""));
}

#[test]
fn exact_block_lines_need_a_bar_and_the_block_stands_alone() {
    let e = err("NAME e\nPROG x\nEXPECT_EXACT |a\n  b\n");
    assert!(matches!(e.kind, CaseErrorKind::ExactLineWithoutBar), "{e}");
    assert_eq!(e.line, 4);
    let e = err("NAME e\nPROG x\nEXPECT_EXACT a\n");
    assert!(matches!(e.kind, CaseErrorKind::ExactLineWithoutBar), "{e}");
    let e = err("NAME e\nPROG x\nEXPECT_EXACT |a\nEXPECT a\n");
    assert!(
        matches!(e.kind, CaseErrorKind::ExactWithOtherExpects { .. }),
        "{e}"
    );
}

#[test]
fn oracle_differs_records_the_reason() {
    let c = one("NAME e\nPROG x\nEXPECT_EXACT |a\nORACLE_DIFFERS 0.17 prints BEGIN\n");
    assert_eq!(c.oracle_differs.as_deref(), Some("0.17 prints BEGIN"));
    assert_eq!(one("NAME e\nPROG x\nEXPECT a\n").oracle_differs, None);
}
