//! `RolesInference`: the roles inferred in short steps (a case, a slice of variables, a few
//! ops) are the roles `Roles::infer` gives, with and without the user's overrides.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed expectation should panic

use memtrace::attribution::{OpRole, RoleConfig, Roles, RolesInference};
use memtrace::format::{load, synth, LoadOptions};

const FIXTURE: &[u8] = include_bytes!("fixtures/smartcomment/locomo/locomo_locomo-1.json");
const DEMO: &[u8] = include_bytes!("../www/demo.json");

#[test]
fn roles_in_steps_are_the_roles_inferred_at_once() {
    let gen = synth::bytes(&synth::Options {
        nodes: 600,
        seed: 3,
    });
    for bytes in [FIXTURE, DEMO, gen.as_slice()] {
        let t = load(bytes, LoadOptions::default()).unwrap().trace;
        let mut overrides = RoleConfig::default();
        overrides
            .add_override(&format!("{}=retrieval", t.ops[0].op_name))
            .unwrap();
        for cfg in [RoleConfig::default(), overrides.clone()] {
            let want = Roles::infer(&t, &cfg);
            for budget in [1, 7, usize::MAX] {
                let mut r = RolesInference::new(&t);
                let mut steps = 1;
                while !r.step(budget) {
                    steps += 1;
                }
                let (done, all) = r.done();
                assert_eq!(done, all, "all done");
                if budget == 1 {
                    // A case, 16 variables or an op a step, and two steps between.
                    let slices = t.vars.len().div_ceil(16).max(1);
                    let want = t.cases.len().max(1) + 1 + slices + 1 + t.ops.len();
                    assert_eq!(steps, want, "one case, variable slice or op a step");
                    assert!(
                        t.cases.len() > 1 || bytes != FIXTURE,
                        "the fixture has cases"
                    );
                }
                assert_eq!(r.finish(&cfg), want, "budget {budget}");
            }
            // Finishing early walks the rest.
            assert_eq!(RolesInference::new(&t).finish(&cfg), want);
        }
        let roles = Roles::infer(&t, &RoleConfig::default());
        let named = t.ops.iter().enumerate().filter(|(i, _)| {
            roles.role(memtrace::model::OpIx(u32::try_from(*i).unwrap())) != OpRole::Other
        });
        assert!(named.count() > 0, "some op has a role to compare");
    }
}
