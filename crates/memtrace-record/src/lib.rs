//! Records a memory system's execution as a smartcomment-compatible trace (see issue: recorder).
//! Empty for now: the core reads traces; recording comes next.
