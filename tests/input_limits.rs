//! Inputs that once made the simulator allocate without bound or abort: a `.shared` array
//! past any SM, a `.local` frame of a gigabyte, a buffer filled from an endless file. Each
//! is now a clear error naming the file and the limit, with exit code 2.

use std::path::PathBuf;
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("warpforge-limits-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A kernel `k(.param .u64 p)` with `decl` in its body and `body` after it.
fn kernel(decl: &str, body: &str) -> String {
    format!(
        ".version 6.0\n.target sm_70\n.address_size 64\n\n\
         .visible .entry k(.param .u64 p)\n{{\n\t.reg .b32 %r<3>;\n\t{decl}\n\
         \tmov.u32 %r1, %tid.x;\n\t{body}\n\tret;\n}}\n"
    )
}

const LAUNCH: &str =
    "kernel = \"k\"\ngrid = 2\nblock = 64\n[[param]]\nkind = \"buffer\"\nbytes = 256\n";

fn run(name: &str, ptx: &str, launch: &str) -> (Option<i32>, String) {
    let dir = scratch(name);
    std::fs::write(dir.join("k.ptx"), ptx).unwrap();
    std::fs::write(dir.join("k.toml"), launch).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_warpforge"))
        .args(["run", "--no-cosim", "--quiet", "--ptx"])
        .arg(dir.join("k.ptx"))
        .arg("--launch")
        .arg(dir.join("k.toml"))
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let text = String::from_utf8_lossy(&o.stderr).to_string();
    (o.status.code(), text)
}

#[test]
fn a_shared_array_past_any_sm_is_a_launch_error_not_a_wrapped_size() {
    // 4 GiB - 1 rounded to the allocation unit once wrapped to 0 bytes and was accepted.
    let ptx = kernel(
        ".shared .align 4 .b8 big[4294967295];",
        "st.shared.u32 [big], %r1;",
    );
    let (code, err) = run("shared", &ptx, LAUNCH);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("4294967295 bytes of shared memory") && err.contains("limit of 16777216"),
        "{err}"
    );
}

#[test]
fn a_gigabyte_local_frame_is_a_launch_error_not_an_abort() {
    let ptx = kernel(
        ".local .align 4 .b8 big[1000000000];",
        "st.local.u32 [big], %r1;",
    );
    let (code, err) = run("local", &ptx, LAUNCH);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("1000000000 bytes of local memory per thread") && err.contains("16384"),
        "{err}"
    );
}

#[test]
fn a_buffer_file_is_read_no_further_than_the_buffer() {
    let launch = LAUNCH.to_string() + "init = \"file\"\nfile = \"/dev/zero\"\n";
    let (code, err) = run("devzero", &kernel("", ""), &launch);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("/dev/zero holds more than 256 bytes, the size of the buffer it fills"),
        "{err}"
    );
}

#[test]
fn an_endless_ptx_file_is_refused_at_its_limit() {
    let o = Command::new(env!("CARGO_BIN_EXE_warpforge"))
        .args([
            "run",
            "--no-cosim",
            "--quiet",
            "--ptx",
            "/dev/zero",
            "--launch",
            "/dev/null",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        err.contains("/dev/zero holds more than") && err.contains("limit for a PTX module"),
        "{err}"
    );
}
