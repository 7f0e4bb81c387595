//! The information-flow attributor on the real smartcomment fixtures: it finds each annotated op.

use memtrace::attribution::InfoFlow;
use memtrace::format::{load, LoadOptions};

#[test]
fn finds_every_annotated_op_in_the_locomo_fixtures() {
    let files: [&[u8]; 3] = [
        include_bytes!("fixtures/smartcomment/locomo/locomo_locomo-1.json"),
        include_bytes!("fixtures/smartcomment/locomo/locomo_locomo-2.json"),
        include_bytes!("../www/demo.json"),
    ];
    let attributor = InfoFlow::default();
    let (mut right_op, mut right_type, mut total) = (0, 0, 0);
    for bytes in files {
        let t = load(bytes, LoadOptions::default()).unwrap().trace;
        for case in &t.cases {
            let want = case.annotation.clone().unwrap();
            let got = attributor.attribute(&t, case).unwrap();
            total += 1;
            right_op += usize::from(got.op_id == want.op_id);
            right_type += usize::from(got.error_type == want.error_type);
            println!(
                "{:28} want {:15} {:40} got {:15} {:40} {}",
                case.query_id,
                want.error_type.as_str(),
                t.op(t.op_by_id(&want.op_id).unwrap()).op_name,
                got.error_type.as_str(),
                got.op_name,
                got.reason
            );
        }
    }
    println!("infoflow on fixtures: op {right_op}/{total}, type {right_type}/{total}");
    assert_eq!((right_op, right_type), (total, total));
}
