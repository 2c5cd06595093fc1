//! `result.toml`: the digests of a merged run (every shard and table) and
//! its root, and reference manifests (a `result.toml` of a clean run).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::digest::sha256_hex;
use super::error::{Error, Result};
use super::rundir::RunDir;

/// Version of the result format.
pub const RESULT_SCHEMA: u32 = 1;

/// A shard's digest in `result.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardDigest {
    /// Job name.
    pub name: String,
    /// Job id.
    pub id: String,
    /// SHA-256 of the whole shard file.
    pub sha256: String,
}

/// A table's digest in `result.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableDigest {
    /// File name under `tables/`.
    pub name: String,
    /// SHA-256 of its content.
    pub sha256: String,
}

/// `RUN_DIR/result.toml`, and the format of reference manifests
/// (`manifests/NAME.toml`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultFile {
    /// Format version ([`RESULT_SCHEMA`]).
    pub schema: u32,
    /// The job file's name.
    pub job_file: String,
    /// Job kind.
    pub kind: String,
    /// SHA-256 over the lines `shard NAME ID SHA256` and `table NAME SHA256`
    /// (each ending in `\n`), shards then tables, in file order.
    pub root: String,
    /// Every shard, in plan order.
    pub shards: Vec<ShardDigest>,
    /// Every table, in the kind's order.
    pub tables: Vec<TableDigest>,
}

impl ResultFile {
    pub fn root_of(shards: &[ShardDigest], tables: &[TableDigest]) -> String {
        let mut s = String::new();
        for d in shards {
            s.push_str(&format!("shard {} {} {}\n", d.name, d.id, d.sha256));
        }
        for t in tables {
            s.push_str(&format!("table {} {}\n", t.name, t.sha256));
        }
        sha256_hex(s.as_bytes())
    }

    /// Reads a result or reference manifest.
    ///
    /// # Errors
    /// [`Error::Io`] or [`Error::Manifest`] naming the file.
    pub fn load(path: &Path) -> Result<ResultFile> {
        let text = std::fs::read_to_string(path).map_err(Error::io(path))?;
        let r: ResultFile = toml::from_str(&text).map_err(|e| Error::Manifest {
            path: path.to_path_buf(),
            message: e.message().replace('\n', " "),
        })?;
        if r.root != Self::root_of(&r.shards, &r.tables) {
            return Err(Error::Manifest {
                path: path.to_path_buf(),
                message: "root digest does not match the listed digests (edited?)".into(),
            });
        }
        Ok(r)
    }

    /// Differences from `reference`, one line each (empty when equal).
    pub fn diff(&self, reference: &ResultFile) -> Vec<String> {
        let mut out = Vec::new();
        if self.kind != reference.kind {
            out.push(format!(
                "kind {} vs reference {}",
                self.kind, reference.kind
            ));
        }
        for r in &reference.shards {
            match self.shards.iter().find(|s| s.name == r.name) {
                None => out.push(format!("shard of job {}: absent here", r.name)),
                Some(s) if s.id != r.id => out.push(format!(
                    "job {}: id {} vs reference {} (different parameters)",
                    r.name, s.id, r.id
                )),
                Some(s) if s.sha256 != r.sha256 => out.push(format!(
                    "shard of job {} ({}): sha256 {} vs reference {}",
                    r.name,
                    RunDir::shard_rel(&s.id),
                    s.sha256,
                    r.sha256
                )),
                _ => {}
            }
        }
        for s in &self.shards {
            if !reference.shards.iter().any(|r| r.name == s.name) {
                out.push(format!("shard of job {}: not in the reference", s.name));
            }
        }
        for r in &reference.tables {
            match self.tables.iter().find(|t| t.name == r.name) {
                None => out.push(format!("table {}: absent here", r.name)),
                Some(t) if t.sha256 != r.sha256 => out.push(format!(
                    "table tables/{}: sha256 {} vs reference {}",
                    r.name, t.sha256, r.sha256
                )),
                _ => {}
            }
        }
        for t in &self.tables {
            if !reference.tables.iter().any(|r| r.name == t.name) {
                out.push(format!("table {}: not in the reference", t.name));
            }
        }
        if out.is_empty() && self.root != reference.root {
            out.push(format!(
                "root {} vs reference {}",
                self.root, reference.root
            ));
        }
        out
    }
}
