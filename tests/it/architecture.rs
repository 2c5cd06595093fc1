//! The layers of ARCHITECTURE.md, checked over the module graph of `src/`.
//!
//! Every `.rs` file under `src/` is a module (`src/a/b.rs` and `src/a/b/mod.rs`
//! are `a::b`). A module depends on another when it names it: a `use` of
//! `crate::…`, `super::…` or `self::…`, or such a path anywhere in its code
//! (types, calls, macros' paths are not seen), names brought in by `use`
//! followed, and items reached through a `pub use` re-export resolved to the
//! module that defines them. A module whose code is split over files of
//! private submodules (`mod part;` without `pub`) is one module for the cycle
//! check (its parts may use each other). Inline modules (`mod tests { … }`) count as their
//! file. The rules:
//!
//! - the graph has no cycle;
//! - the graph of top-level folders (each module collapsed to its first
//!   segment: `solvers`, `games`, `pipeline`, `plot`, `serve`, `cli`, `util`,
//!   …) has no cycle either, so the folders form layers;
//! - `util` reaches nothing in the crate;
//! - `solvers` (the pure solvers) reaches nothing outside `solvers`;
//! - a full checker (any module with a `fullcheck` segment) reaches no solver
//!   (`solvers`), directly or through other modules, except the trait of
//!   layered games' rules (`solvers::engine::rules`), which reaches
//!   nothing and through which the engine games' checker moves;
//! - the generic pipeline (`pipeline`, `plot`) reaches no game's
//!   folder (`games`) and no solver;
//! - only `serve` knows HTTP (no `axum`, `StatusCode` or `http_status`
//!   elsewhere).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

type Module = Vec<String>;

fn show(m: &[String]) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// What one file says: the paths it names (absolute, unresolved), its
/// `pub use` re-exports (name → absolute path) and its text.
#[derive(Default)]
struct FileFacts {
    paths: Vec<Module>,
    /// Submodules in files of their own declared without `pub` (`mod x;`):
    /// the parts of one module split over several files.
    private_children: BTreeSet<String>,
    reexports: BTreeMap<String, Module>,
}

struct Collector<'a> {
    module: &'a Module,
    /// Inline module nesting inside the file.
    inline: Vec<String>,
    /// Names brought in by `use`: ident → absolute path.
    aliases: BTreeMap<String, Module>,
    facts: FileFacts,
}

impl Collector<'_> {
    fn here(&self) -> Module {
        let mut m = self.module.clone();
        m.extend(self.inline.iter().cloned());
        m
    }

    /// The absolute path of `segs` as written here, if it names this crate.
    fn absolute(&self, segs: &[String]) -> Option<Module> {
        let first = segs.first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.here(),
            "super" => self.here(),
            _ => {
                let a = self.aliases.get(first)?;
                let mut p = a.clone();
                p.extend(segs[1..].iter().cloned());
                return Some(p);
            }
        };
        let mut rest = &segs[1..];
        if first == "super" {
            base.pop();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, public: bool) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, public);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                self.bind(prefix, &name, &name, public);
            }
            syn::UseTree::Rename(r) => {
                self.bind(prefix, &r.ident.to_string(), &r.rename.to_string(), public);
            }
            syn::UseTree::Glob(_) => {
                if let Some(abs) = self.absolute(prefix) {
                    self.facts.paths.push(abs);
                }
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t, public);
                }
            }
        }
    }

    fn bind(&mut self, prefix: &[String], name: &str, alias: &str, public: bool) {
        let mut segs = prefix.to_vec();
        if name != "self" {
            segs.push(name.to_string());
        }
        if let Some(abs) = self.absolute(&segs) {
            self.facts.paths.push(abs.clone());
            if public && self.inline.is_empty() {
                self.facts.reexports.insert(alias.to_string(), abs.clone());
            }
            let key = if name == "self" {
                prefix.last().cloned().unwrap_or_default()
            } else {
                alias.to_string()
            };
            self.aliases.insert(key, abs);
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let public = matches!(u.vis, syn::Visibility::Public(_));
        let mut prefix = Vec::new();
        if u.leading_colon.is_none() {
            self.use_tree(&mut prefix, &u.tree, public);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_none()
            && self.inline.is_empty()
            && matches!(m.vis, syn::Visibility::Inherited)
        {
            self.facts.private_children.insert(m.ident.to_string());
        }
        if m.content.is_some() {
            self.inline.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.inline.pop();
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() && p.segments.len() > 1 {
            let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            if let Some(abs) = self.absolute(&segs) {
                self.facts.paths.push(abs);
            }
        }
        syn::visit::visit_path(self, p);
    }

    /// Macro bodies are not parsed: their `a::b::c` token runs are read as
    /// paths (e.g. the kinds listed in a `vec![…]`).
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        fn walk(c: &mut Collector<'_>, tokens: proc_macro2::TokenStream) {
            let mut run: Vec<String> = Vec::new();
            let mut colons = 0;
            let flush = |c: &mut Collector<'_>, run: &mut Vec<String>| {
                if run.len() > 1
                    && let Some(abs) = c.absolute(run)
                {
                    c.facts.paths.push(abs);
                }
                run.clear();
            };
            for t in tokens {
                match t {
                    proc_macro2::TokenTree::Ident(i) => {
                        if colons != 2 {
                            flush(c, &mut run);
                        }
                        run.push(i.to_string());
                        colons = 0;
                    }
                    proc_macro2::TokenTree::Punct(p) if p.as_char() == ':' => colons += 1,
                    proc_macro2::TokenTree::Group(g) => {
                        flush(c, &mut run);
                        colons = 0;
                        walk(c, g.stream());
                    }
                    _ => {
                        flush(c, &mut run);
                        colons = 0;
                    }
                }
            }
            flush(c, &mut run);
        }
        walk(self, m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

struct Graph {
    /// Each module's unit: itself, or for a private submodule in a file of
    /// its own (`mod x;`, one module's code split over files) its parent's.
    units: BTreeMap<Module, Module>,
    modules: BTreeSet<Module>,
    edges: BTreeMap<Module, BTreeSet<Module>>,
    texts: BTreeMap<Module, (PathBuf, String)>,
}

impl Graph {
    fn of_src() -> Graph {
        let src = src_dir();
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let sources = files
            .iter()
            .map(|f| (f.clone(), std::fs::read_to_string(f).unwrap()))
            .collect();
        Graph::of_files(&src, sources)
    }

    /// The graph of `files` (path under `src`, text).
    fn of_files(src: &Path, files: Vec<(PathBuf, String)>) -> Graph {
        let mut modules = BTreeSet::new();
        let mut facts = BTreeMap::new();
        let mut texts = BTreeMap::new();
        for (f, text) in files {
            let m = module_of(src, &f);
            let ast = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{}: does not parse: {e}", f.display()));
            let mut c = Collector {
                module: &m,
                inline: Vec::new(),
                aliases: BTreeMap::new(),
                facts: FileFacts::default(),
            };
            c.visit_file(&ast);
            modules.insert(m.clone());
            facts.insert(m.clone(), c.facts);
            texts.insert(m, (f, text));
        }
        // A module whose file is split into private submodules is one
        // module: each such part's unit is its parent (for the cycle check).
        let unit = |m: &Module| -> Module {
            let mut u = m.clone();
            while let Some(last) = u.last().cloned() {
                let parent: Module = u[..u.len() - 1].to_vec();
                match facts.get(&parent) {
                    Some(f) if f.private_children.contains(&last) => u = parent,
                    _ => break,
                }
            }
            u
        };
        let units = modules.iter().map(|m| (m.clone(), unit(m))).collect();
        let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (m, f) in &facts {
            let e = edges.entry(m.clone()).or_default();
            for p in &f.paths {
                if let Some(target) = resolve(&modules, &facts, p, 0)
                    && &target != m
                {
                    e.insert(target);
                }
            }
        }
        Graph {
            units,
            modules,
            edges,
            texts,
        }
    }

    /// Every module reachable from `m` (not `m` itself unless on a cycle),
    /// with one path to each.
    fn reach(&self, m: &Module) -> BTreeMap<Module, Vec<Module>> {
        let mut seen: BTreeMap<Module, Vec<Module>> = BTreeMap::new();
        let mut stack = vec![(m.clone(), vec![m.clone()])];
        while let Some((cur, path)) = stack.pop() {
            for n in self.edges.get(&cur).into_iter().flatten() {
                if !seen.contains_key(n) {
                    let mut p = path.clone();
                    p.push(n.clone());
                    seen.insert(n.clone(), p.clone());
                    stack.push((n.clone(), p));
                }
            }
        }
        seen
    }

    /// The graph with the parts of a split file joined: every module
    /// replaced by its unit (`units`), edges within a unit dropped. Parts of
    /// one file-split module may use each other (`use super::*` and the
    /// parent's imports of its parts); cycles between units are still
    /// cycles.
    fn files_joined(&self) -> Graph {
        let u = |m: &Module| self.units.get(m).cloned().unwrap_or_else(|| m.clone());
        let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (a, bs) in &self.edges {
            let e = edges.entry(u(a)).or_default();
            for b in bs {
                if u(b) != u(a) {
                    e.insert(u(b));
                }
            }
        }
        let modules: BTreeSet<Module> = self.modules.iter().map(u).collect();
        Graph {
            units: modules.iter().map(|m| (m.clone(), m.clone())).collect(),
            modules,
            edges,
            texts: BTreeMap::new(),
        }
    }

    /// The strongly connected components with more than one module.
    fn cycles(&self) -> Vec<Vec<Module>> {
        // Kosaraju: order by finish time, then walk the reversed graph.
        let mods: Vec<&Module> = self.modules.iter().collect();
        let mut order = Vec::new();
        let mut done = BTreeSet::new();
        for m in &mods {
            if done.contains(*m) {
                continue;
            }
            let mut stack: Vec<(Module, bool)> = vec![((*m).clone(), false)];
            while let Some((cur, finished)) = stack.pop() {
                if finished {
                    order.push(cur);
                    continue;
                }
                if !done.insert(cur.clone()) {
                    continue;
                }
                stack.push((cur.clone(), true));
                for n in self.edges.get(&cur).into_iter().flatten() {
                    if !done.contains(n) {
                        stack.push((n.clone(), false));
                    }
                }
            }
        }
        let mut rev: BTreeMap<&Module, Vec<&Module>> = BTreeMap::new();
        for (a, bs) in &self.edges {
            for b in bs {
                rev.entry(b).or_default().push(a);
            }
        }
        let mut assigned = BTreeSet::new();
        let mut out = Vec::new();
        for m in order.iter().rev() {
            if assigned.contains(m) {
                continue;
            }
            let mut comp = Vec::new();
            let mut stack = vec![m];
            assigned.insert(m.clone());
            while let Some(cur) = stack.pop() {
                comp.push(cur.clone());
                for n in rev.get(cur).into_iter().flatten() {
                    if assigned.insert((*n).clone()) {
                        stack.push(n);
                    }
                }
            }
            if comp.len() > 1 {
                comp.sort();
                out.push(comp);
            }
        }
        out
    }

    /// The graph of top-level folders: every module collapsed to its first
    /// segment (the crate root stays `crate`), an edge `a → b` when some
    /// module of `a` reaches some module of `b` directly, `a ≠ b`. A cycle
    /// here is a pair of folders that use each other, even when no two
    /// files do.
    fn folders(&self) -> Graph {
        let top = |m: &Module| -> Module { m.iter().take(1).cloned().collect() };
        let modules: BTreeSet<Module> = self.modules.iter().map(top).collect();
        let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (a, bs) in &self.edges {
            let e = edges.entry(top(a)).or_default();
            for b in bs {
                if top(b) != top(a) {
                    e.insert(top(b));
                }
            }
        }
        Graph {
            units: modules.iter().map(|m| (m.clone(), m.clone())).collect(),
            modules,
            edges,
            texts: BTreeMap::new(),
        }
    }
}

/// The module that defines what `path` names: the longest prefix that is a
/// module, followed through `pub use` re-exports.
fn resolve(
    modules: &BTreeSet<Module>,
    facts: &BTreeMap<Module, FileFacts>,
    path: &Module,
    depth: usize,
) -> Option<Module> {
    let mut k = path.len();
    while k > 0 && !modules.contains(&path[..k]) {
        k -= 1;
    }
    let m = path[..k].to_vec();
    if depth < 8
        && k < path.len()
        && let Some(target) = facts.get(&m).and_then(|f| f.reexports.get(&path[k]))
    {
        let mut t = target.clone();
        t.extend(path[k + 1..].iter().cloned());
        if &t != path
            && let Some(r) = resolve(modules, facts, &t, depth + 1)
        {
            return Some(r);
        }
    }
    modules.contains(&m).then_some(m)
}

fn starts(m: &Module, prefix: &str) -> bool {
    m.first().is_some_and(|s| s == prefix)
}

fn path_text(p: &[Module]) -> String {
    p.iter().map(|m| show(m)).collect::<Vec<_>>().join(" → ")
}

#[test]
fn the_module_graph_has_no_cycle() {
    let g = Graph::of_src().files_joined();
    let cycles = g.cycles();
    let text: Vec<String> = cycles
        .iter()
        .map(|c| c.iter().map(|m| show(m)).collect::<Vec<_>>().join(" ↔ "))
        .collect();
    assert!(
        cycles.is_empty(),
        "{} cycles in the module graph:\n{}",
        cycles.len(),
        text.join("\n")
    );
}

fn cycle_text(cycles: &[Vec<Module>]) -> String {
    cycles
        .iter()
        .map(|c| c.iter().map(|m| show(m)).collect::<Vec<_>>().join(" ↔ "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The edges of `g` from one folder of `cycle` to another, each with one
/// module pair that makes it (to say which `use` to remove).
fn folder_edges(g: &Graph, cycle: &[Module]) -> Vec<String> {
    let mut out = Vec::new();
    for (a, bs) in &g.edges {
        for b in bs {
            let (fa, fb) = (&a[..1.min(a.len())], &b[..1.min(b.len())]);
            if fa != fb && cycle.iter().any(|c| c[..] == *fa) && cycle.iter().any(|c| c[..] == *fb)
            {
                out.push(format!("{} → {}", show(a), show(b)));
            }
        }
    }
    out
}

#[test]
fn the_folder_graph_has_no_cycle() {
    let g = Graph::of_src();
    let f = g.folders();
    let cycles = f.cycles();
    let why: Vec<String> = cycles.iter().flat_map(|c| folder_edges(&g, c)).collect();
    assert!(
        cycles.is_empty(),
        "{} cycles between top-level folders:\n{}\nmade by:\n{}",
        cycles.len(),
        cycle_text(&cycles),
        why.join("\n")
    );
}

#[test]
fn util_reaches_nothing() {
    let g = Graph::of_src();
    let m: Module = vec!["util".into()];
    assert!(g.modules.contains(&m), "util is gone");
    let reached: Vec<String> = g.reach(&m).into_keys().map(|t| show(&t)).collect();
    assert!(reached.is_empty(), "util reaches {reached:?}");
}

/// The modules of `g` whose first segment is `layer` that reach a module
/// for which `bad` holds, with the path that gets there.
fn violations(
    g: &Graph,
    from: impl Fn(&Module) -> bool,
    bad: impl Fn(&Module) -> bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for m in g.modules.iter().filter(|m| from(m)) {
        for (t, path) in g.reach(m) {
            if bad(&t) {
                out.push(path_text(&path));
                break;
            }
        }
    }
    out
}

#[test]
fn solvers_import_nothing_of_the_pipeline() {
    let g = Graph::of_src();
    let v = violations(&g, |m| starts(m, "solvers"), |t| !starts(t, "solvers"));
    assert!(
        v.is_empty(),
        "a solver reaches outside solvers/:\n{}",
        v.join("\n")
    );
}

/// The one module of `solvers` a full checker may reach: the trait a
/// layered game's rules implement (`solvers::engine::rules`: moves,
/// terminal values, ranks), through which the engine games' checker
/// generates moves. It holds no solver and reaches nothing else.
/// The engine's rules trait and its value type, which a full checker (and
/// the claims) may import: both reach nothing.
fn rules_trait(t: &Module) -> bool {
    t.len() == 3 && t[0] == "solvers" && t[1] == "engine" && (t[2] == "rules" || t[2] == "value")
}

#[test]
fn full_checkers_import_no_solver() {
    let g = Graph::of_src();
    let v = violations(
        &g,
        |m| m.iter().any(|s| s == "fullcheck"),
        |t| starts(t, "solvers") && !rules_trait(t),
    );
    assert!(
        v.is_empty(),
        "a full checker reaches a solver:\n{}",
        v.join("\n")
    );
}

#[test]
fn the_rules_trait_reaches_nothing() {
    let g = Graph::of_src();
    for leaf in ["rules", "value"] {
        let m: Module = vec!["solvers".into(), "engine".into(), leaf.into()];
        assert!(g.modules.contains(&m), "solvers::engine::{leaf} is gone");
        let reached: Vec<String> = g.reach(&m).into_keys().map(|t| show(&t)).collect();
        assert!(
            reached.is_empty(),
            "solvers::engine::{leaf} reaches {reached:?}: a full checker may import it only while it reaches nothing"
        );
    }
}

#[test]
fn the_generic_pipeline_names_no_game() {
    let g = Graph::of_src();
    let v = violations(
        &g,
        |m| starts(m, "pipeline") || starts(m, "plot"),
        |t| starts(t, "solvers") || starts(t, "games"),
    );
    assert!(
        v.is_empty(),
        "the generic pipeline reaches a game:\n{}",
        v.join("\n")
    );
}

#[test]
fn only_the_server_knows_http() {
    let g = Graph::of_src();
    let mut found = Vec::new();
    for (m, (file, text)) in &g.texts {
        if starts(m, "serve") {
            continue;
        }
        for word in ["axum", "StatusCode", "http_status"] {
            if text.contains(word) {
                found.push(format!("{}: `{word}`", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "HTTP outside serve/:\n{}",
        found.join("\n")
    );
}

/// The graph itself is what the rules above read: show that it sees real
/// edges (a checker that saw none would pass everything).
#[test]
fn the_module_graph_sees_the_edges_it_checks() {
    let g = Graph::of_src();
    let edges: usize = g.edges.values().map(BTreeSet::len).sum();
    assert!(
        g.modules.len() > 50 && edges > 150,
        "{} modules, {edges} edges",
        g.modules.len()
    );
    let cli = g.edges.get(&vec!["cli".to_string()]).expect("cli module");
    assert!(
        cli.iter().any(|m| starts(m, "pipeline")),
        "cli → pipeline not seen"
    );
}

/// The rules fail when broken: a checker that imports a solver (directly or
/// through its kind), a solver that imports the pipeline, and a cycle, in a
/// small tree written here.
#[test]
fn the_rules_fail_on_a_tree_that_breaks_them() {
    let src = Path::new("/src");
    let file = |p: &str, t: &str| (src.join(p), t.to_string());
    let g = Graph::of_files(
        src,
        vec![
            file(
                "lib.rs",
                "pub mod games; pub mod pipeline; pub mod solvers;",
            ),
            file("solvers/mod.rs", "pub mod g;"),
            file("solvers/g/mod.rs", "use crate::pipeline::Thing;"),
            file("pipeline/mod.rs", "pub struct Thing;"),
            file("games/mod.rs", "pub mod g;"),
            file("games/g/mod.rs", "pub mod kind; pub mod fullcheck;"),
            file(
                "games/g/kind.rs",
                "use crate::solvers::g::Solver; use super::fullcheck::C;",
            ),
            file("games/g/fullcheck.rs", "use super::kind::Meta;"),
        ],
    );
    let checker = violations(
        &g,
        |m| m.iter().any(|s| s == "fullcheck"),
        |t| starts(t, "solvers"),
    );
    assert_eq!(
        checker,
        ["games::g::fullcheck → games::g::kind → solvers::g"],
        "a checker reaching a solver through its kind"
    );
    let solver = violations(&g, |m| starts(m, "solvers"), |t| !starts(t, "solvers"));
    assert_eq!(solver, ["solvers::g → pipeline"]);
    let cycles = g.cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert_eq!(cycles[0].len(), 2, "{cycles:?}");
}

/// The folder check fails on a cycle between folders that no two files make:
/// `plot` borrowing a helper of `pipeline::resources` while
/// `pipeline::plots` draws with `plot` (the cycle `main` had). The module
/// graph has no cycle; the folder graph has one, and moving the helper to
/// `util` removes it.
#[test]
fn the_folder_check_fails_on_a_folder_cycle() {
    let src = Path::new("/src");
    let file = |p: &str, t: &str| (src.join(p), t.to_string());
    let common = |plot_uses: &str| {
        vec![
            file("lib.rs", "pub mod pipeline; pub mod plot; pub mod util;"),
            file("pipeline/mod.rs", "pub mod plots; pub mod resources;"),
            file("pipeline/plots.rs", "use crate::plot::Chart;"),
            file(
                "pipeline/resources.rs",
                "pub use crate::util::thousands; pub fn other() {}",
            ),
            file("plot/mod.rs", plot_uses),
            file("util.rs", "pub fn thousands() {}"),
        ]
    };
    let broken = Graph::of_files(
        src,
        common("pub struct Chart; fn f() { crate::pipeline::resources::other(); }"),
    );
    assert!(broken.cycles().is_empty(), "{:?}", broken.cycles());
    let cycles = broken.folders().cycles();
    assert_eq!(
        cycle_text(&cycles),
        "pipeline ↔ plot",
        "the folder cycle is not seen"
    );
    assert_eq!(
        folder_edges(&broken, &cycles[0]),
        ["pipeline::plots → plot", "plot → pipeline::resources"]
    );
    let fixed = Graph::of_files(
        src,
        common("pub struct Chart; fn f() { crate::util::thousands(); }"),
    );
    assert!(fixed.cycles().is_empty());
    assert!(
        fixed.folders().cycles().is_empty(),
        "{}",
        cycle_text(&fixed.folders().cycles())
    );
    let folders = fixed.folders();
    assert!(folders.edges[&vec!["plot".to_string()]].contains(&vec!["util".to_string()]));
}

/// A module split over files of private submodules (`mod part;`) is one
/// module for the cycle check: its parts may use each other and their
/// parent. A cycle through a public submodule, or between two modules
/// whose parts use each other, is still found.
#[test]
fn the_parts_of_a_split_file_are_one_module_for_the_cycle_check() {
    let src = Path::new("/src");
    let file = |p: &str, t: &str| (src.join(p), t.to_string());
    let g = Graph::of_files(
        src,
        vec![
            file("lib.rs", "pub mod a; pub mod b;"),
            file(
                "a/mod.rs",
                "mod part; pub mod open; use self::part::*; pub fn f() { crate::a::part::g(); }",
            ),
            file(
                "a/part.rs",
                "use super::*; pub(super) fn g() { crate::a::f(); }",
            ),
            file("a/open.rs", "pub fn h() { crate::a::f(); }"),
            file("b/mod.rs", "pub fn k() {}"),
        ],
    );
    assert_eq!(
        g.cycles().len(),
        1,
        "parts use each other: a cycle of files"
    );
    assert!(g.files_joined().cycles().is_empty());
    // A public submodule that the parent uses back is a cycle.
    let g = Graph::of_files(
        src,
        vec![
            file("lib.rs", "pub mod a;"),
            file(
                "a/mod.rs",
                "pub mod open; pub fn f() { crate::a::open::h(); }",
            ),
            file("a/open.rs", "pub fn h() { crate::a::f(); }"),
        ],
    );
    assert_eq!(g.files_joined().cycles().len(), 1);
    // Two split modules whose parts use each other are a cycle of units.
    let g = Graph::of_files(
        src,
        vec![
            file("lib.rs", "pub mod a; pub mod b;"),
            file("a/mod.rs", "mod part; pub fn f() {}"),
            file("a/part.rs", "pub(super) fn g() { crate::b::k(); }"),
            file("b/mod.rs", "mod part; pub fn k() {}"),
            file("b/part.rs", "pub(super) fn m() { crate::a::f(); }"),
        ],
    );
    let cycles = g.files_joined().cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
}

/// The web page names no game: its tabs come from `GET /api/v1/`, and every
/// game of the generic engine is drawn by the one board view from what its
/// probe describes, so a new engine game needs no page code (tic-tac-toe
/// joined so). Checked: no engine game's name or title appears in the
/// page, and every game of the registry describes a view.
#[test]
fn the_page_names_no_engine_game() {
    let page = gametables::serve::PAGE.to_lowercase();
    let probes = gametables::games::registry().probes(&[], 1 << 20).unwrap();
    let mut engine = 0;
    for p in &probes.games {
        let d = p.describe();
        let view = d["view"]
            .as_str()
            .unwrap_or_else(|| panic!("{}: no view in {d}", p.game()));
        assert!(d["title"].is_string(), "{}: no title", p.game());
        if view == "board" {
            engine += 1;
            let title = d["title"].as_str().unwrap().to_lowercase();
            for name in [p.game().to_string(), title] {
                assert!(
                    !page.contains(&name),
                    "the page names the engine game `{name}`"
                );
            }
        }
    }
    assert!(engine >= 3, "dodgem, quixo and tictactoe are engine games");
}
