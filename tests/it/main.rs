//! gametables' integration tests, in one test binary (`cargo test --release
//! --test it`): one module per subject, the helpers they share in
//! [`support`]. One binary links the library once instead of once per file.
//!
//! The tests of all modules run in one process, two at a time (or as many as
//! `--test-threads` says): none may change the process's environment, current
//! directory or limits; commands get theirs on the child (`Command::env`,
//! `current_dir`, `ulimit` in a shell). A test that measures a child's memory
//! measures that child alone (`support::output_with_rusage`) from a process of
//! its own (`support::in_own_process`): Linux charges a child, at its `exec`,
//! with the peak memory of the process it was spawned from.
//!
//! Ignored tests are run by name, e.g.
//! `cargo test --release --test it -- --ignored dodgem::five_by_five`.

mod support;

mod architecture;
mod browser;
mod census;
mod census_pipeline;
mod chomp;
mod chomp_policy;
mod chomp_split;
mod chomp_window;
mod claims;
mod cli_output;
mod conformance;
mod degenerate_input;
mod dodgem;
mod dodgem_break;
mod dodgem_resume;
mod full_disk;
mod fullcheck;
mod grundy;
mod hostile;
mod impartial;
mod limits;
mod newcomer;
mod pipeline;
mod pipeline_break;
mod plot;
mod probe;
mod quixo;
mod resources;
mod serve_work;
mod shard;
mod slurm;
mod slurm_cluster;
mod split;
mod three_row;
mod tictactoe;
mod user_text;
