use super::*;
use crate::pipeline::plan::{InputRef, PlannedJob, SCHEMA};

fn job(name: &str, cost: u64, inputs: &[&PlannedJob]) -> PlannedJob {
    PlannedJob {
        name: name.into(),
        id: sha256_hex(name.as_bytes()),
        cost,
        memory: 64 << 20,
        threads: 1,
        shard_bytes: 0,
        cpu_seconds: 0,
        inputs: inputs
            .iter()
            .map(|j| InputRef {
                name: j.name.clone(),
                id: j.id.clone(),
            })
            .collect(),
        params: toml::Table::new(),
        ranks: 1,
    }
}

/// The defaults of `run --executor slurm`, no account.
fn test_options() -> SlurmOptions {
    SlurmOptions {
        exe: PathBuf::from("/usr/bin/gametables"),
        partition: None,
        sbatch_args: vec![],
        array_limit: None,
        account: None,
        qos: None,
        time_margin: DEFAULT_TIME_MARGIN,
        time_floor: DEFAULT_TIME_FLOOR,
        max_retries: DEFAULT_MAX_RETRIES,
        detach: false,
        force: false,
        progress: false,
        retry_for: Duration::ZERO,
        latency_wait: DEFAULT_LATENCY_WAIT,
    }
}

/// a, b → c → e; d independent; f reads a.
fn dag() -> PlanFile {
    let a = job("a", 1, &[]);
    let b = job("b", 5, &[]);
    let c = job("c", 1, &[&a, &b]);
    let d = job("d", 3, &[]);
    let e = job("e", 1, &[&c]);
    let f = job("f", 1, &[&a]);
    PlanFile {
        schema: SCHEMA,
        job_file: "dag".into(),
        kind: "test".into(),
        params: toml::Table::new(),
        jobs: vec![a, b, c, d, e, f],
    }
}

fn names<'p>(plan: &'p PlanFile, parts: &[Part]) -> Vec<(String, Vec<&'p str>, Vec<usize>)> {
    parts
        .iter()
        .map(|p| {
            let jobs = p.jobs.iter().map(|&i| plan.jobs[i].name.as_str()).collect();
            (p.name.clone(), jobs, p.after.clone())
        })
        .collect()
}

#[test]
fn levels_and_dependencies_follow_the_dag() {
    let plan = dag();
    let parts = parts_of(&plan, &[0, 1, 2, 3, 4, 5], 1001);
    assert_eq!(
        names(&plan, &parts),
        vec![
            ("level0-part0".into(), vec!["b", "d", "a"], vec![]),
            ("level1-part0".into(), vec!["c", "f"], vec![0]),
            ("level2-part0".into(), vec!["e"], vec![1]),
        ]
    );
}

#[test]
fn finished_inputs_lower_the_level() {
    let plan = dag();
    // a, b, d done: c and f have no pending input.
    let parts = parts_of(&plan, &[2, 4, 5], 1001);
    assert_eq!(
        names(&plan, &parts),
        vec![
            ("level0-part0".into(), vec!["c", "f"], vec![]),
            ("level1-part0".into(), vec!["e"], vec![0]),
        ]
    );
}

#[test]
fn arrays_split_at_max_array_size_and_depend_only_on_their_inputs() {
    let plan = dag();
    let parts = parts_of(&plan, &[0, 1, 2, 3, 4, 5], 2);
    assert_eq!(
        names(&plan, &parts),
        vec![
            ("level0-part0".into(), vec!["b", "d"], vec![]),
            ("level0-part1".into(), vec!["a"], vec![]),
            // c reads a and b (parts 0 and 1); f reads a (part 1).
            ("level1-part0".into(), vec!["c", "f"], vec![0, 1]),
            ("level2-part0".into(), vec!["e"], vec![2]),
        ]
    );
}

#[test]
fn arrays_ask_for_the_memory_and_threads_of_their_jobs_within_a_factor_two() {
    let mut plan = dag();
    // Level 0: a 1 GiB, b 12 GiB with 4 threads, d 700 MiB; f 10 GiB at level 1.
    for (name, mem, threads) in [
        ("a", 1 << 30, 1),
        ("b", 12 << 30, 4),
        ("d", 700 << 20, 1),
        ("f", 10 << 30, 1),
    ] {
        let j = plan.jobs.iter_mut().find(|j| j.name == name).unwrap();
        j.memory = mem;
        j.threads = threads;
    }
    let parts = parts_of(&plan, &[0, 1, 2, 3, 4, 5], 1001);
    let got: Vec<(String, Vec<&str>, u64, u32)> = parts
        .iter()
        .map(|p| {
            let jobs = p.jobs.iter().map(|&i| plan.jobs[i].name.as_str()).collect();
            (p.name.clone(), jobs, p.memory >> 20, p.threads)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("level0-part0".into(), vec!["b"], 12 << 10, 4),
            // 700 MiB is more than half of 1 GiB: one array asking 1 GiB.
            ("level0-part1".into(), vec!["d", "a"], 1 << 10, 1),
            ("level1-part0".into(), vec!["f"], 10 << 10, 1),
            ("level1-part1".into(), vec!["c"], 64, 1),
            ("level2-part0".into(), vec!["e"], 64, 1),
        ]
    );
    let plan_dir = RunDir::new("/nonexistent/run");
    let opts = SlurmOptions {
        account: Some("proj".into()),
        ..test_options()
    };
    let sub = Submission {
        plan: &plan,
        root: plan_dir.root().to_path_buf(),
        exe: opts.exe.clone(),
        number: 1,
        job_name: "gt-dag-0".into(),
        parts,
        opts: &opts,
        time_cap: None,
        mem_cap: None,
    };
    let script = sub.array_script(&sub.parts[0]);
    assert!(script.contains("#SBATCH --mem=12288M\n"), "{script}");
    assert!(script.contains("#SBATCH --cpus-per-task=4\n"), "{script}");
    // The floor (the test jobs estimate 0 CPU seconds), a signal a
    // minute before, no requeue by Slurm, the default throttle, the account.
    assert!(
        script.contains("#SBATCH --time=10 # 3 x the CPU estimate"),
        "{script}"
    );
    assert!(script.contains("#SBATCH --signal=B:USR1@60\n"), "{script}");
    assert!(script.contains("#SBATCH --no-requeue\n"), "{script}");
    assert!(script.contains("#SBATCH --array=0-0%64\n"), "{script}");
    assert!(script.contains("#SBATCH --account=proj\n"), "{script}");
    assert!(!script.contains("--exclude"), "{script}");
    let merge = sub.merge_script();
    assert!(merge.contains("#SBATCH --account=proj\n"), "{merge}");
    // The merge asks for the largest job's memory (b, 12 GiB) and, its
    // shards being small, the time floor.
    assert!(
        merge.contains("#SBATCH --mem=12288M # as the plan's largest job, at least 1024 MiB\n"),
        "{merge}"
    );
    assert!(
        merge.contains("#SBATCH --time=10 # 3 x the shards read at 32 MiB/s"),
        "{merge}"
    );
    // 100 GiB of shards: 3 × 3,200 s + the 60 s latency wait = 161 min.
    let mut big = plan.clone();
    for j in &mut big.jobs {
        j.shard_bytes = 0;
    }
    big.jobs[0].shard_bytes = 100 << 30;
    let sub = Submission { plan: &big, ..sub };
    assert_eq!(sub.merge_resources(), (12288, 161));
    // A partition limit of 2 hours cuts it, and the script says so.
    let sub = Submission {
        time_cap: Some(120),
        ..sub
    };
    assert_eq!(sub.merge_resources(), (12288, 120));
    assert!(
        sub.merge_script()
            .contains("#SBATCH --time=120 # 3 x the shards read at 32 MiB/s plus --latency-wait, at least 10 min, or the partition's time limit\n"),
        "{}",
        sub.merge_script()
    );
}

/// No task asks for more time than the partition's longest limit
/// (`sinfo %l`): such a task would wait forever or be refused.
#[test]
fn tasks_ask_for_no_more_than_the_partitions_time_limit() {
    let mut plan = dag();
    for j in &mut plan.jobs {
        j.cpu_seconds = 10 * 3600;
    }
    let opts = test_options();
    let t = tempfile::tempdir().unwrap();
    let dir = RunDir::new(t.path());
    let pending: Vec<usize> = (0..plan.jobs.len()).collect();
    let build_with = |nodes: NodeLimits| {
        build(
            &dir,
            &plan,
            &opts,
            &pending,
            1001,
            &BTreeMap::new(),
            Some(nodes),
        )
        .unwrap()
    };
    let minutes = |max_minutes| {
        let sub = build_with(NodeLimits {
            cpus: 64,
            mem_mib: 1 << 20,
            max_minutes,
        });
        let parts: Vec<u64> = sub.parts.iter().map(|p| p.minutes).collect();
        // Small jobs: the merge asks for its floor of memory.
        assert_eq!(sub.merge_resources().0, MERGE_MIN_MIB);
        (parts, sub.merge_resources().1)
    };
    // Nodes smaller than the floor: the merge asks for what they have.
    let small = build_with(NodeLimits {
        cpus: 2,
        mem_mib: 700,
        max_minutes: None,
    });
    assert_eq!(small.merge_resources().0, 700);
    // 3 × 10 h on one thread: 1,800 min, uncapped on an infinite partition.
    let (parts, merge) = minutes(None);
    assert!(parts.iter().all(|&m| m == 1800), "{parts:?}");
    assert_eq!(merge, 10);
    let (parts, merge) = minutes(Some(24 * 60));
    assert!(parts.iter().all(|&m| m == 1440), "{parts:?}");
    assert_eq!(merge, 10);
    let (parts, merge) = minutes(Some(5));
    assert!(parts.iter().all(|&m| m == 5), "{parts:?}");
    assert_eq!(merge, 5);
}

#[test]
fn node_limits_are_the_largest_node() {
    assert_eq!(
        parse_node_limits("p|2|1536\np|4+|3000\n", false),
        Some(NodeLimits {
            cpus: 4,
            mem_mib: 3000,
            max_minutes: None,
        })
    );
    assert_eq!(parse_node_limits("", false), None);
    // The longest time limit of the groups; one infinite: no cap.
    let limits = |t: &str| parse_node_limits(t, false).unwrap().max_minutes;
    assert_eq!(
        limits("p|2|1536|2:00:00\np|4|3000|1-00:00:00\n"),
        Some(1440)
    );
    assert_eq!(limits("p|2|1536|30:00\n"), Some(30));
    assert_eq!(limits("p|2|1536|2:00:00\np|4|3000|infinite\n"), None);
    assert_eq!(limits("p|2|1536|n/a\n"), None);
    // Without --partition, sinfo lists every partition: only the
    // default one (marked `*`) counts; none marked: all of them.
    let all = "short*|8|16000|4:00:00\nlong|64|512000|infinite\n";
    assert_eq!(
        parse_node_limits(all, true),
        Some(NodeLimits {
            cpus: 8,
            mem_mib: 16000,
            max_minutes: Some(240),
        })
    );
    assert_eq!(
        parse_node_limits(&all.replace('*', ""), true),
        Some(NodeLimits {
            cpus: 64,
            mem_mib: 512000,
            max_minutes: None,
        })
    );
}

#[test]
fn slurm_time_limits_parse_as_sinfo_prints_them() {
    assert_eq!(parse_slurm_minutes("infinite"), None);
    assert_eq!(parse_slurm_minutes("UNLIMITED"), None);
    assert_eq!(parse_slurm_minutes("30"), Some(30));
    assert_eq!(parse_slurm_minutes("30:00"), Some(30));
    assert_eq!(parse_slurm_minutes("2:00:00"), Some(120));
    assert_eq!(parse_slurm_minutes("1-00:00:00"), Some(1440));
    assert_eq!(parse_slurm_minutes("2-12"), Some(3600));
    assert_eq!(parse_slurm_minutes("2-12:30"), Some(3630));
    assert_eq!(parse_slurm_minutes("7-00:00:00"), Some(10080));
    assert_eq!(parse_slurm_minutes(""), None);
}

#[test]
fn time_limits_follow_the_cpu_estimate_with_margin_and_floor() {
    let p = TimePolicy {
        margin: 3.0,
        floor: Duration::from_secs(600),
    };
    // 0 s and 100 s of CPU: the floor of 10 min.
    assert_eq!(time_minutes(0, 1, p, 1), 10);
    assert_eq!(time_minutes(100, 1, p, 1), 10);
    // 1 h on 1 thread: 3 h; on 4 threads: 45 min; after a time-out x4.
    assert_eq!(time_minutes(3600, 1, p, 1), 180);
    assert_eq!(time_minutes(3600, 4, p, 1), 45);
    assert_eq!(time_minutes(3600, 4, p, 4), 180);
    // Rounded up to whole minutes, never below one.
    assert_eq!(
        time_minutes(
            61,
            1,
            TimePolicy {
                margin: 1.0,
                floor: Duration::ZERO
            },
            1
        ),
        2
    );
    assert_eq!(
        time_minutes(
            0,
            1,
            TimePolicy {
                margin: 1.0,
                floor: Duration::ZERO
            },
            1
        ),
        1
    );
    assert_eq!(signal_before(1), 30);
    assert_eq!(signal_before(10), 60);
    assert_eq!(signal_before(600), 300);
}

#[test]
fn retried_jobs_get_their_own_arrays_with_more_time_memory_and_excluded_nodes() {
    let plan = dag();
    let mut retries = BTreeMap::new();
    retries.insert(
        1, // b
        Retry {
            attempts: 1,
            time_factor: 4,
            mem_factor: 2,
            exclude: ["n2".to_string()].into(),
        },
    );
    let policy = TimePolicy {
        margin: 3.0,
        floor: Duration::from_secs(600),
    };
    let parts = parts_with(&plan, &[0, 1, 3], 1001, &retries, policy);
    let got: Vec<(Vec<&str>, u64, u64, Vec<String>)> = parts
        .iter()
        .map(|p| {
            let jobs = p.jobs.iter().map(|&i| plan.jobs[i].name.as_str()).collect();
            (jobs, p.memory >> 20, p.minutes, p.exclude.clone())
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (vec!["b"], 128, 40, vec!["n2".to_string()]),
            (vec!["d", "a"], 64, 10, vec![]),
        ]
    );
}

fn failure(state: &str, node: &str) -> Failure {
    Failure {
        job: Some(0),
        slurm_id: "7_3".into(),
        state: state.into(),
        node: node.into(),
        minutes: 10,
        mem_mib: 512,
        log: PathBuf::from("/nonexistent/log"),
        not_run: false,
        line: "job x".into(),
    }
}

#[test]
fn failures_are_resubmitted_only_when_another_try_can_cure_them() {
    let (r, what) = decide(
        &failure("NODE_FAIL", "n2"),
        None,
        2,
        Overrides::default(),
        None,
    )
    .unwrap();
    assert_eq!(r.exclude, ["n2".to_string()].into());
    assert_eq!(r.attempts, 1);
    assert!(what.contains("--exclude=n2"), "{what}");
    let (r2, _) = decide(
        &failure("NODE_FAIL", "n3"),
        Some(&r),
        2,
        Overrides::default(),
        None,
    )
    .unwrap();
    assert_eq!(r2.exclude, ["n2".to_string(), "n3".to_string()].into());
    // Bounded: a third failure is not resubmitted.
    let no = decide(
        &failure("NODE_FAIL", "n1"),
        Some(&r2),
        2,
        Overrides::default(),
        None,
    )
    .unwrap_err();
    assert!(no.contains("failed 3 times"), "{no}");

    let (r, what) = decide(
        &failure("TIMEOUT", "n1"),
        None,
        2,
        Overrides::default(),
        None,
    )
    .unwrap();
    assert_eq!((r.time_factor, r.exclude.len()), (4, 0));
    assert!(what.contains("--time 40 min"), "{what}");

    let (r, what) = decide(
        &failure("OUT_OF_MEMORY", "n1"),
        None,
        2,
        Overrides::default(),
        None,
    )
    .unwrap();
    assert_eq!(r.mem_factor, 2);
    assert!(what.contains("--mem 1024 MiB"), "{what}");
    let no = decide(
        &failure("OUT_OF_MEMORY", "n1"),
        Some(&r),
        2,
        Overrides::default(),
        None,
    )
    .unwrap_err();
    assert!(
        no.contains("out of memory again with --mem 512 MiB"),
        "{no}"
    );

    assert!(
        decide(
            &failure("PREEMPTED", ""),
            None,
            2,
            Overrides::default(),
            None
        )
        .is_ok()
    );
    for state in ["FAILED", "CANCELLED", "GONE"] {
        assert_eq!(
            decide(&failure(state, "n1"), None, 2, Overrides::default(), None).unwrap_err(),
            ""
        );
    }
    // Killed by Slurm's memory sampler: FAILED, but the log says why.
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("log");
    std::fs::write(
        &log,
        "slurmstepd-n1: error: StepId=9.batch exceeded memory limit (434782208 > 62914560), being killed\n",
    )
    .unwrap();
    let mut f = failure("FAILED", "n1");
    f.log = log;
    assert_eq!(
        decide(&f, None, 2, Overrides::default(), None)
            .unwrap()
            .0
            .mem_factor,
        2
    );
    let no = decide(
        &f,
        None,
        2,
        Overrides {
            mem: Some("--mem=5M"),
            time: None,
        },
        None,
    )
    .unwrap_err();
    assert!(no.contains("--sbatch-arg=--mem=5M"), "{no}");

    // A time-out at the partition's longest limit is not tried again
    // with the same limit; below it, the next try is capped there.
    let mut f = failure("TIMEOUT", "n1");
    f.minutes = 240;
    let no = decide(&f, None, 2, Overrides::default(), Some(240)).unwrap_err();
    assert!(no.contains("the partition's longest"), "{no}");
    f.minutes = 100;
    let (_, what) = decide(&f, None, 2, Overrides::default(), Some(240)).unwrap();
    assert!(what.contains("again with --time 240 min"), "{what}");
    // Under --sbatch-arg=--time=…, which every try gets: not resubmitted.
    let args = ["--time=10:00".to_string()];
    let no = decide(&f, None, 2, Overrides::of(&args), None).unwrap_err();
    assert!(no.contains("--sbatch-arg=--time=10:00"), "{no}");
    assert_eq!(
        Overrides::of(&["--mem=1G".to_string(), "-t5".to_string()]).time,
        Some("-t5")
    );
}

#[test]
fn max_array_size_is_read_from_scontrol_output() {
    let text = "Configuration data as of 2026-11-29T19:00:00\nMaxArraySize            = 5\nMaxJobCount             = 10000\n";
    assert_eq!(parse_max_array_size(text), 5);
    assert_eq!(
        parse_max_array_size("MaxJobCount = 3\n"),
        DEFAULT_MAX_ARRAY_SIZE
    );
}

#[test]
fn squeue_rows_are_parsed_and_ranges_expanded() {
    let rows = parse_squeue(
        "12|0|RUNNING|n2|0:05|None\n12|[3-4,7%2]|PENDING||0:00|JobArrayTaskLimit\n13|N/A|PENDING||0:00|Dependency\n",
    );
    let got: Vec<(String, Option<u32>, String)> = rows
        .iter()
        .map(|r| (r.job.clone(), r.task, r.state.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("12".into(), Some(0), "RUNNING".into()),
            ("12".into(), Some(3), "PENDING".into()),
            ("12".into(), Some(4), "PENDING".into()),
            ("12".into(), Some(7), "PENDING".into()),
            ("13".into(), None, "PENDING".into()),
        ]
    );
    assert!(rows[0].active());
    assert_eq!(
        (rows[0].node.as_str(), rows[0].elapsed.as_str()),
        ("n2", "0:05")
    );
    assert!(!parse_squeue("12|1|CANCELLED|n1|0:01|None")[0].active());
}

#[test]
fn shell_quoting() {
    assert_eq!(sh("/a/b-c_d.e"), "/a/b-c_d.e");
    assert_eq!(sh("--time=1:00:00"), "--time=1:00:00");
    assert_eq!(sh("a b"), "'a b'");
    assert_eq!(sh("it's"), r"'it'\''s'");
    assert_eq!(sh(""), "''");
}

#[test]
fn transient_failures_are_told_from_real_errors() {
    for e in [
        "`sbatch` failed (exit status: 1): sbatch: error: Batch job submission failed: Socket timed out on send/recv operation",
        "`squeue` failed (exit status: 1): slurm_load_jobs error: Socket timed out on send/recv operation",
        "`scontrol` failed (exit status: 1): slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)",
        "`sbatch` failed (exit status: 1): sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying",
    ] {
        assert!(is_transient(e), "{e}");
    }
    for e in [
        "`sbatch` failed (exit status: 1): sbatch: error: invalid partition specified: nope",
        "`sbatch` failed (exit status: 1): sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified",
        "`sbatch` failed (exit status: 1): sbatch: unrecognized option '--bogus'",
        "`scancel` could not start: No such file or directory (os error 2)",
    ] {
        assert!(!is_transient(e), "{e}");
    }
}

#[test]
fn a_task_gone_without_shard_fails_only_after_the_grace() {
    let t = Instant::now();
    let mut seen = Seen::Queued;
    let completed = QueueRow {
        job: "1".into(),
        task: Some(0),
        state: "COMPLETED".into(),
        node: "n1".into(),
        elapsed: "0:03".into(),
        reason: "None".into(),
    };
    let grace = DEFAULT_LATENCY_WAIT;
    assert_eq!(judge(Some(&completed), &mut seen, t, grace), None);
    assert_eq!(seen, Seen::Gone(t));
    assert_eq!(
        judge(Some(&completed), &mut seen, t + grace / 2, grace),
        None
    );
    assert!(judge(Some(&completed), &mut seen, t + grace, grace).is_some());
    let cancelled = QueueRow {
        state: "CANCELLED".into(),
        ..completed
    };
    let mut seen = Seen::Queued;
    assert_eq!(
        judge(Some(&cancelled), &mut seen, t, grace).as_deref(),
        Some("CANCELLED")
    );
}

/// A rank of a split job killed by a signal (srun says `Killed`) is tried
/// again as it was; a rank that failed of its own (an exit code) is not.
#[test]
fn a_killed_rank_is_resubmitted_and_a_failed_rank_is_not() {
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("log");
    let mut f = failure("FAILED", "n1,n2");
    f.log = log.clone();
    std::fs::write(
        &log,
        "srun: error: n2: task 1: Killed\nsrun: error: n1: task 0: Killed\n",
    )
    .unwrap();
    let (r, why) = decide(&f, None, 2, Overrides::default(), None).unwrap();
    assert!(why.contains("a rank was killed"), "{why}");
    assert!(r.exclude.is_empty());
    std::fs::write(
        &log,
        "srun: error: n1: task 0: Exited with exit code 1\nsrun: error: n2: task 1: Killed\n",
    )
    .unwrap();
    assert!(decide(&f, None, 2, Overrides::default(), None).is_err());
}
