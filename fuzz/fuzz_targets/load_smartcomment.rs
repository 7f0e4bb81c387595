#![no_main]
use libfuzzer_sys::fuzz_target;
use memtrace::format::Format;

fuzz_target!(|data: &[u8]| memtrace_fuzz::exercise(data, Some(Format::Smartcomment)));
