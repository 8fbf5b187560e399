#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| coco_fuzz::targets::ledger(data));
