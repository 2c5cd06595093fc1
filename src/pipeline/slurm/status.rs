//! What `gametables status` shows of a run's latest Slurm submission.

use super::*;

/// Lines for `gametables status`: the latest Slurm submission of the run
/// directory and where its tasks stand (empty if it never used Slurm).
pub fn status_lines(dir: &RunDir, plan: &PlanFile) -> Vec<String> {
    status(dir, plan).0
}

/// [`status_lines`], and for `status --json` every task of the latest
/// submission (job, Slurm job id, node, state, elapsed time, shard) and the
/// jobs resubmitted after failures (`null` if the run never used Slurm).
pub fn status(dir: &RunDir, plan: &PlanFile) -> (Vec<String>, serde_json::Value) {
    let record = match SubmissionRecord::latest(dir) {
        Ok(Some(r)) => r,
        Ok(None) => return (Vec::new(), serde_json::Value::Null),
        Err(e) => return (vec![format!("slurm: {e}")], serde_json::Value::Null),
    };
    let resubmitted: Vec<serde_json::Value> = record
        .resubmitted
        .iter()
        .map(|r| {
            serde_json::json!({"job": r.job, "id": r.id, "slurm_id": r.slurm_id, "state": r.state,
                "node": r.node, "try": r.attempt, "action": r.action})
        })
        .collect();
    let mut json = serde_json::json!({
        "submission": record.submission,
        "merge_job": record.merge.slurm_job_id,
        "resubmitted": resubmitted,
        "tasks": [],
    });
    let resub_lines: Vec<String> = resubmission_lines(&record.resubmitted)
        .into_iter()
        .map(|l| format!("  resubmitted {l}"))
        .collect();
    let head = format!(
        "slurm submission {} (array jobs {}; merge job {})",
        record.submission,
        record
            .arrays
            .iter()
            .map(|a| a.slurm_job_id.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        record.merge.slurm_job_id
    );
    let rows = match Tools::find(STATUS_RETRY)
        .and_then(|t| queue(&t, &record.job_name, true).map_err(|e| unreachable(&e)))
    {
        Ok(r) => r,
        Err(e) => {
            let mut out = vec![format!("{head}: queue unknown ({e})")];
            out.extend(resub_lines);
            return (out, json);
        }
    };
    let (mut done, mut running, mut waiting) = (0, 0, 0);
    let mut failed = Vec::new();
    let mut tasks_json = Vec::new();
    for a in &record.arrays {
        for (t, id) in a.jobs.iter().enumerate() {
            let row = rows.get(&(a.slurm_job_id.clone(), Some(t as u32)));
            let name = plan
                .jobs
                .iter()
                .find(|j| &j.id == id)
                .map_or("?", |j| j.name.as_str());
            tasks_json.push(serde_json::json!({
                "job": name,
                "id": id,
                "slurm_id": format!("{}_{t}", a.slurm_job_id),
                "node": row.map(|r| r.node.clone()).filter(|n| !n.is_empty()),
                "state": row.map(|r| r.state.clone()),
                "elapsed": row.map(|r| r.elapsed.clone()),
                "time_minutes": a.time_minutes,
                "mem_mib": a.mem_mib,
                "shard": dir.shard_path(id).exists(),
            }));
            if dir.shard_path(id).exists() {
                done += 1;
            } else if let Some(r) = row.filter(|r| r.active()) {
                if r.state == "RUNNING" {
                    running += 1;
                } else {
                    waiting += 1;
                }
            } else {
                let sid = format!("{}_{t}", a.slurm_job_id);
                let state = row.map_or("left the queue".to_string(), state_text);
                let node = row
                    .filter(|r| !r.node.is_empty())
                    .map_or(String::new(), |r| {
                        format!(" on {} after {}", r.node, r.elapsed)
                    });
                failed.push(format!(
                    "  FAILED {name} ({}): Slurm job {sid} {state}{node}, no shard; log: {}",
                    &id[..12.min(id.len())],
                    log_of_task(dir, &sid).display()
                ));
            }
        }
    }
    let merge = if dir.result_path().exists() && failed.is_empty() && running + waiting == 0 {
        "merged".to_string()
    } else if dir.result_path().exists() {
        "result.toml is stale".to_string()
    } else {
        match rows.get(&(record.merge.slurm_job_id.clone(), None)) {
            Some(r) => format!("merge {}", r.state.to_lowercase()),
            None => "merge not in the queue".to_string(),
        }
    };
    let mut out = vec![format!(
        "{head}: {done} done, {running} running, {waiting} waiting, {} failed; {merge}",
        failed.len()
    )];
    let any_failed = !failed.is_empty();
    out.extend(failed);
    if any_failed {
        out.push(format!(
            "  run `gametables run` again with the same job file and --run-dir {} to resubmit the failed jobs",
            dir.root().display()
        ));
    }
    out.extend(resub_lines);
    json["tasks"] = serde_json::Value::Array(tasks_json);
    (out, json)
}
