//! The long runs' pure state, tested natively: the LLM methods' provider settings and cost
//! meter, the Optimize view's form and saved loop, and "find all causes" (decisive-set
//! searches). The runs themselves go through the core (`session`, `memtrace_memsys`); the
//! browser side is `services::runner` and the components.

pub mod causes;
pub mod llm_run;
pub mod optimize;
