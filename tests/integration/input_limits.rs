//! Inputs that once made the simulator allocate without bound or abort: a `.shared` array
//! past any SM, a `.local` frame of a gigabyte, a buffer filled from an endless file, a
//! constant bank or parameter list past CUDA's limits, an input file larger than its buffer,
//! a bad launch shape with huge buffers. Each is a clear error naming the file and the limit
//! (the launch file's line and key), with exit code 2, before anything is sized from it.

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

#[test]
fn constant_memory_past_64_kib_is_an_error_naming_the_variable() {
    let ptx = format!(
        ".version 6.0\n.target sm_70\n.address_size 64\n\
         .const .align 4 .b8 small[1024];\n.const .align 4 .b8 table[65536];\n{}",
        kernel("", "").split_once(".address_size 64\n").unwrap().1
    );
    let (code, err) = run("const", &ptx, LAUNCH);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("66560 bytes (from `table` on)") && err.contains("65536 bytes of constant"),
        "{err}"
    );
}

#[test]
fn a_parameter_list_past_cudas_limit_is_a_launch_error() {
    let ptx = ".version 6.0\n.target sm_70\n.address_size 64\n\
               .visible .entry k(.param .align 8 .b8 s[40000])\n{\n\tret;\n}\n";
    let launch = "kernel = \"k\"\ngrid = 1\nblock = 1\n[[param]]\nkind = \"struct\"\nbytes = [1]\n";
    let (code, err) = run("params", ptx, launch);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("parameters take 40000 bytes, more than the limit of 32764"),
        "{err}"
    );
}

#[test]
fn a_regular_input_file_larger_than_its_buffer_is_refused_before_it_is_read() {
    let dir = scratch("bigfile");
    std::fs::write(dir.join("in.bin"), vec![7u8; 300]).unwrap();
    let launch = format!(
        "{LAUNCH}init = \"file\"\nfile = \"{}\"\n",
        dir.join("in.bin").display()
    );
    let (code, err) = run("bigfile_run", &kernel("", ""), &launch);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("k.toml:8:") && err.contains("param 0 `file`"),
        "names the line and key: {err}"
    );
    assert!(
        err.contains("holds 300 bytes, more than the 256 bytes of the buffer it fills"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The launch shape is checked before any buffer is allocated: a 6 GiB buffer with a
/// zero-sized grid is a grid error (and allocating it would not touch host memory anyway:
/// device memory is backed page by page when written).
#[test]
fn launch_dimensions_are_checked_before_buffers_are_allocated() {
    let launch = LAUNCH
        .replace("grid = 2", "grid = [2, 0, 1]")
        .replace("bytes = 256", "bytes = 6442450944");
    let (code, err) = run("shape", &kernel("", ""), &launch);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("`grid`") && err.contains("grid.y = 0"),
        "{err}"
    );
    // A buffer past the device's 8 GiB is refused with its line and key.
    let launch = LAUNCH.replace("bytes = 256", "bytes = 10000000000");
    let (code, err) = run("huge", &kernel("", ""), &launch);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("k.toml:6:")
            && err.contains("param 0 `bytes`")
            && err.contains("device memory limit"),
        "{err}"
    );
}
