//! A user's role override on the op info-flow blames types the verdict (the page's roles panel
//! and `--role NAME=ROLE` rely on it); overrides on other ops, or to roles that cannot be at
//! fault, leave the type to the trace.

use memtrace::attribution::{InfoFlow, OpRole, RoleConfig, Roles};
use memtrace::format::{load, LoadOptions};

const DEMO: &[u8] = include_bytes!("../www/demo.json");

#[test]
fn overriding_the_blamed_ops_role_types_the_verdict() {
    let t = load(DEMO, LoadOptions::default()).unwrap().trace;
    let plain = Roles::infer(&t, &RoleConfig::default());
    let mut checked = 0;
    for case in &t.cases {
        let before = InfoFlow::default()
            .attribute_with(&t, &plain, case)
            .unwrap();
        for role in [OpRole::Extraction, OpRole::Update, OpRole::Deletion] {
            let want = role.error_type().unwrap();
            let mut cfg = RoleConfig::default();
            cfg.add_override(&format!("{}={role}", before.op_name))
                .unwrap();
            let after = InfoFlow::default()
                .attribute_with(&t, &Roles::infer(&t, &cfg), case)
                .unwrap();
            assert_eq!(after.op_id, before.op_id, "{}: same op", case.query_id);
            assert_eq!(
                after.error_type, want,
                "{}: typed by the override",
                case.query_id
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 15,
        "the demo has at least 5 failed cases: {checked}"
    );
}

#[test]
fn overrides_elsewhere_or_to_roles_without_fault_leave_the_type() {
    let t = load(DEMO, LoadOptions::default()).unwrap().trace;
    let plain = Roles::infer(&t, &RoleConfig::default());
    for case in &t.cases {
        let before = InfoFlow::default()
            .attribute_with(&t, &plain, case)
            .unwrap();
        let mut cfg = RoleConfig::default();
        cfg.add_override(&format!("{}=other", before.op_name))
            .unwrap();
        // Another op name than the blamed one, set to what inference says it is.
        let other = plain
            .by_name(&t)
            .into_iter()
            .find(|n| n.op_name != before.op_name && n.role != OpRole::Judge)
            .unwrap();
        cfg.overrides.insert(other.op_name, other.role);
        let after = InfoFlow::default()
            .attribute_with(&t, &Roles::infer(&t, &cfg), case)
            .unwrap();
        assert_eq!(
            (after.error_type, &after.op_id),
            (before.error_type, &before.op_id),
            "{}",
            case.query_id
        );
    }
}
