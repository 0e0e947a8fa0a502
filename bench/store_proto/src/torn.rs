//! Damaged-file cases on real files, for stores that bypass our `FileSystem` seam: load rows
//! whose every byte is known, close, then for each case copy the pristine directory, damage a
//! file (flip a byte, cut a file short, leave a half-written orphan), reopen and read everything
//! back. Each case ends in exactly one of: an error naming the problem (good), all data correct
//! (the damage hit nothing the store reads, or the store ignored an orphan), a panic, or wrong
//! data (a silently different answer: disqualifying).

use crate::base;
use crate::workload::{index_key, load, mix, row_key, row_value};
use std::io;
use std::path::{Path, PathBuf};

fn largest_file(dir: &Path) -> Option<PathBuf> {
    let mut best: Option<(u64, PathBuf)> = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            let m = e.metadata().ok()?;
            if m.is_dir() {
                stack.push(e.path());
            } else if best.as_ref().is_none_or(|(s, _)| m.len() > *s) {
                best = Some((m.len(), e.path()));
            }
        }
    }
    best.map(|(_, p)| p)
}

fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)?.flatten() {
        let target = to.join(e.file_name());
        if e.metadata()?.is_dir() {
            copy_dir(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), target)?;
        }
    }
    Ok(())
}

/// Reads everything back; `Ok(None)` when every row and index entry is exactly as loaded.
fn verify(store: &str, dir: &Path, rows: u64) -> io::Result<Option<String>> {
    let base = base::open(store, dir, 16 << 20)?;
    let snap = base.snapshot()?;
    let (mut n_rows, mut n_index, mut wrong) = (0u64, 0u64, 0u64);
    base::scan_all(snap.as_ref(), vec![1], 2, &mut |key, value| {
        if key.len() == 9 && key[0] == 1 {
            let id = u64::from_be_bytes(key[1..9].try_into().unwrap_or([0; 8]));
            let k = 1 + (mix(id) % rows) as u32;
            n_rows += 1;
            wrong += u64::from(value != row_value(k, id).as_slice());
        } else if key.len() == 13 && key[0] == 2 {
            let id = u64::from_be_bytes(key[5..13].try_into().unwrap_or([0; 8]));
            n_index += 1;
            wrong += u64::from(key != index_key(1 + (mix(id) % rows) as u32, id).as_slice());
        } else {
            wrong += 1;
        }
    })?;
    for id in (1..=rows).step_by(997) {
        let k = 1 + (mix(id) % rows) as u32;
        if snap.get(&row_key(id))?.as_deref() != Some(row_value(k, id).as_slice()) {
            wrong += 1;
        }
    }
    Ok((n_rows != rows || n_index != rows || wrong > 0)
        .then(|| format!("{n_rows} rows, {n_index} index entries, {wrong} wrong")))
}

/// Runs the cases; one line per case.
pub fn cases(store: &str, root: &Path, rows: u64) -> io::Result<Vec<String>> {
    let pristine = root.join(format!("{store}-pristine"));
    let _ = std::fs::remove_dir_all(&pristine);
    {
        let base = base::open(store, &pristine, 16 << 20)?;
        load(base.as_ref(), rows)?;
        base.settle();
    }
    if let Some(problem) = verify(store, &pristine, rows)? {
        return Err(io::Error::other(format!(
            "pristine copy does not verify: {problem}"
        )));
    }
    let big = largest_file(&pristine).ok_or_else(|| io::Error::other("no files"))?;
    let rel = big
        .strip_prefix(&pristine)
        .map_err(base::err)?
        .to_path_buf();
    let len = std::fs::metadata(&big)?.len();
    type Damage = Box<dyn Fn(&Path) -> io::Result<()>>;
    let flip = |at: u64| -> Damage {
        let rel = rel.clone();
        Box::new(move |dir: &Path| {
            let p = dir.join(&rel);
            let mut bytes = std::fs::read(&p)?;
            bytes[at as usize] ^= 0x10;
            std::fs::write(p, bytes)
        })
    };
    let mut list: Vec<(String, Damage)> = Vec::new();
    for pct in [10, 50, 90] {
        list.push((
            format!("one bit flipped at {pct}% of the largest file"),
            flip(len * pct / 100),
        ));
    }
    let rel2 = rel.clone();
    list.push((
        "largest file cut to half (a sync that lied)".into(),
        Box::new(move |dir: &Path| {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join(&rel2))?;
            f.set_len(len / 2)
        }),
    ));
    if store == "fjall" {
        let rel3 = rel.clone();
        list.push((
            "half-written orphan table file (crash during a checkpoint)".into(),
            Box::new(move |dir: &Path| {
                let p = dir.join(&rel3);
                let orphan = p.with_file_name("999");
                let bytes = std::fs::read(&p)?;
                std::fs::write(orphan, &bytes[..bytes.len() / 2])
            }),
        ));
    }
    let mut out = Vec::new();
    for (i, (what, damage)) in list.iter().enumerate() {
        let dir = root.join(format!("{store}-case{i}"));
        let _ = std::fs::remove_dir_all(&dir);
        copy_dir(&pristine, &dir)?;
        damage(&dir)?;
        let outcome = std::panic::catch_unwind(|| verify(store, &dir, rows));
        let verdict = match outcome {
            Ok(Ok(None)) => "all data correct".to_string(),
            Ok(Ok(Some(problem))) => format!("WRONG DATA: {problem}"),
            Ok(Err(e)) => format!(
                "error: {}",
                e.to_string().chars().take(120).collect::<String>()
            ),
            Err(_) => "PANIC".to_string(),
        };
        out.push(format!("{store} | {} | {what} | {verdict}", rel.display()));
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_dir_all(&pristine);
    Ok(out)
}
