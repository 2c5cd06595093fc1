//! What a user reads names published works, never internal ones: README.md,
//! the job files' comments and every `--help` text cite authors, titles and
//! addresses a reader can find, not the names of files that are not in the
//! repository ("seed 000", "BRIEF.md", paths of the development machine).
//! The README's list of published sources is the one `report.md` uses.

fn works() -> Vec<gametables::pipeline::sources::Work> {
    gametables::games::registry().works()
}

use crate::support::{gt, repo};

/// Internal names that must not reach a user.
const INTERNAL: &[&str] = &[
    "seed 00",
    "Seed 00",
    "seed00",
    "seeds/",
    "BRIEF",
    "the brief",
    "/work/",
];

fn internal_names_in(what: &str, text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .flat_map(|(i, l)| {
            INTERNAL
                .iter()
                .filter(|bad| l.contains(*bad))
                .map(move |bad| format!("{what}:{}: {bad:?} in {l:?}", i + 1))
        })
        .collect()
}

#[test]
fn readme_and_job_files_cite_no_internal_names() {
    let mut found = internal_names_in(
        "README.md",
        &std::fs::read_to_string(repo().join("README.md")).unwrap(),
    );
    let mut jobs: Vec<_> = std::fs::read_dir(repo().join("jobs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    jobs.sort();
    assert!(jobs.len() >= 10, "the standard job files: {jobs:?}");
    for p in &jobs {
        let text = std::fs::read_to_string(p).unwrap();
        found.extend(internal_names_in(&p.display().to_string(), &text));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// `gametables ARGS… --help`.
fn help(args: &[&str]) -> String {
    let o = gt().args(args).arg("--help").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{args:?}");
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn every_help_text_cites_no_internal_names() {
    let mut found = Vec::new();
    let mut seen = 0;
    for cmd in [
        &[][..],
        &["run"],
        &["plan"],
        &["worker"],
        &["merge"],
        &["status"],
        &["verify"],
        &["report"],
        &["plot"],
        &["serve"],
        &["query"],
        &["query", "chomp"],
        &["query", "dodgem"],
        &["query", "nim"],
        &["query", "subtraction"],
        &["query", "octal"],
        &["query", "three-row"],
    ] {
        let text = help(cmd);
        assert!(text.contains("Usage:"), "{cmd:?}: {text}");
        seen += text.len();
        found.extend(internal_names_in(
            &format!("gametables {} --help", cmd.join(" ")),
            &text,
        ));
    }
    assert!(seen > 2000, "the help texts are read");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn readme_lists_every_published_source_as_report_md_does() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let section = readme
        .split("## Published sources")
        .nth(1)
        .expect("README has a Published sources section");
    let section = section.split("\n## ").next().unwrap();
    for w in works() {
        let line = format!("- **{}**: {}", w.name, w.reference);
        assert!(section.contains(&line), "README lacks\n{line}");
    }
    assert_eq!(
        section.lines().filter(|l| l.starts_with("- **")).count(),
        works().len(),
        "one line per work, no other"
    );
}
