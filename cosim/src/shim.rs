//! The generated `extern "C"` shim compiled into every model library.
//!
//! Design: the shim is the only C++ the harness writes per model, and it is tiny. It owns
//! one `VerilatedContext` + model per instance (so instances never share simulation time,
//! trace state or `$finish` flags), exports a port table (name, width, direction, storage
//! bytes) and a raw pointer to each port's storage (`CData`/`SData`/`IData`/`QData` or the
//! `EData` words of a `VlWide`), and one call per half cycle (`wf_eval`: clock low, settle
//! the combinational logic after new inputs; `wf_edge`: rising edge). Rust writes inputs
//! and reads outputs straight through the pointers: no name lookups, no copies through the
//! FFI. `$finish`, `$stop` and Verilator fatal errors are routed through the runtime's
//! `VL_USER_FINISH/STOP/FATAL` hooks into a per-thread message; `$stop` and fatal errors
//! unwind out of `eval()` as a C++ exception caught at the shim boundary. The instance
//! then becomes *sticky-failed*: every later call returns the same error and evaluates
//! nothing, so a broken model can never kill or hang the host process.
//!
//! Tracing: `wf_new(trace_capable)` sets `traceEverOn` before construction (a context
//! without it runs at full speed); `wf_trace_open/close` attach a `VerilatedVcdC` to the
//! live model. While a trace is open, `wf_eval` dumps at time `10*cycle` and `wf_edge` at
//! `10*cycle + 5`, where `cycle` counts edges (settable with `wf_set_cycle`), so RTL and
//! model VCDs share one time axis.

/// Bump whenever the generated text changes meaning (it is part of the cache key).
pub const SHIM_VERSION: u32 = 13;

/// One port as Verilator declared it in the model header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPort {
    /// The Verilog port name.
    pub name: String,
    /// The C++ member Verilator generated for it (`__SYM__set` for a port named `set`,
    /// which is a reserved word in Verilator's C++).
    pub member: String,
    pub input: bool,
    pub width: u32,
}

impl HeaderPort {
    /// Bytes of Verilator storage: 1/2/4/8, or 4 per 32-bit word for wide ports.
    pub fn storage_bytes(&self) -> u32 {
        storage_bytes(self.width)
    }
}

pub fn storage_bytes(width: u32) -> u32 {
    match width {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        33..=64 => 8,
        w => 4 * w.div_ceil(32),
    }
}

/// Parse the `VL_IN8(&clk,0,0);` ... `VL_OUTW(&x,69,0,3);` port declarations of the
/// generated model header.
pub fn parse_header_ports(header: &str) -> Vec<HeaderPort> {
    let mut ports = vec![];
    for line in header.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("VL_") else {
            continue;
        };
        let (input, rest) = if let Some(r) = rest.strip_prefix("INOUT") {
            (false, r)
        } else if let Some(r) = rest.strip_prefix("IN") {
            (true, r)
        } else if let Some(r) = rest.strip_prefix("OUT") {
            (false, r)
        } else {
            continue;
        };
        let Some(open) = rest.find("(&") else {
            continue;
        };
        let Some(close) = rest.rfind(')') else {
            continue;
        };
        let args: Vec<&str> = rest[open + 2..close].split(',').map(str::trim).collect();
        if args.len() < 3 {
            continue;
        }
        let (Ok(msb), Ok(lsb)) = (args[1].parse::<i64>(), args[2].parse::<i64>()) else {
            continue;
        };
        let member = args[0].to_string();
        ports.push(HeaderPort {
            name: member
                .strip_prefix("__SYM__")
                .unwrap_or(&member)
                .to_string(),
            member,
            input,
            width: (msb - lsb).unsigned_abs() as u32 + 1,
        });
    }
    ports
}

/// The declaration of Verilator's internal settle/evaluate function of the root module
/// (`<prefix>___024root___eval`), as Verilator 5.006 emits it; [`generate_opts`] calls it
/// directly when the generated sources define it (see [`has_direct_eval`]).
pub fn direct_eval_signature(prefix: &str) -> String {
    format!("void {prefix}___024root___eval({prefix}___024root* vlSelf)")
}

/// Whether a generated model source defines the root `_eval` function with the expected
/// signature (so the shim can call it directly).
pub fn has_direct_eval(prefix: &str, source: &str) -> bool {
    source.contains(&format!("{} {{", direct_eval_signature(prefix)))
}

/// How to generate a shim.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShimOptions {
    /// Call the root module's `_eval` directly: the per-cycle calls skip `eval_step()`'s
    /// per-call bookkeeping (thread-local mtask id, end-of-eval message queue, trace
    /// activity flag). The first evaluation of an instance (its initialisation) and every
    /// evaluation while a VCD is open still go through `eval()`. Only for single-threaded
    /// models (`--threads 1`), where the bookkeeping has nothing to do (messages are
    /// printed at once on mtask 0); see [`has_direct_eval`].
    pub direct_eval: bool,
    /// A model built for X checking (see `BuildOptions::x_random`): each instance's
    /// context randomises X values with this seed.
    pub x_seed: Option<u64>,
    /// The top module has the co-simulation wrapper's `wf_sample` input, whose rising edge
    /// latches the internal state into the debug-state ports (`wf_sample_state`).
    pub sample_port: bool,
    /// With `direct_eval`: the definition of [`crate::edge_eval::EDGE_EVAL_FN`] (the root
    /// `_eval` without its input-combinational loop, see [`crate::edge_eval::derive`]),
    /// which `wf_edge` calls instead of the whole `_eval`: the inputs have not changed
    /// since the `wf_eval` before it.
    pub edge_eval: Option<String>,
    /// The model was Verilated with `--trace` (see `BuildOptions::tracing`); without it
    /// `wf_trace_open` is an error saying so.
    pub tracing: bool,
    /// The top module has a mutant schema's selector input ([`MUTANT_PORT`]): the shim
    /// exports `wf_set_mutant`. (Only then is anything added, so the shim of every other
    /// model, and its cache entry, is unchanged.)
    pub mutant_port: bool,
    /// Per port of the table: a debug-state port (compared only when sampled, so not in a
    /// co-simulation frame; see `wf_check_frames`). Must name every port (`generate`
    /// asserts it): a port left out would be taken for a compared output.
    pub state: Vec<bool>,
}

/// The order in which a co-simulation frame carries the ports `indices` (of the table, in
/// table order): by storage size (1, 2, 4 and 8 bytes, then wide ports), in table order
/// within each size. `RtlModel`'s per-cycle loops (one typed store or load per port, no
/// dispatch on the size) and the shim's `wf_check_frames` both read frames in this order.
pub fn frame_order(indices: &[usize], bytes_of: impl Fn(usize) -> u32) -> Vec<usize> {
    let mut order = indices.to_vec();
    order.sort_by_key(|&i| match bytes_of(i) {
        1 => 0,
        2 => 1,
        4 => 2,
        8 => 3,
        _ => 4,
    });
    order
}

/// 64-bit words a port of `width` bits (at least 1) takes in a co-simulation frame (as in
/// its `Bits` value).
#[inline(always)]
pub fn frame_words(width: u32) -> usize {
    width.div_ceil(64) as usize
}

/// The C++ of `wf_frame_inputs` (a frame's inputs into the model's ports) and
/// `wf_frame_diff` (its compared outputs against the model's: 0 when equal), straight-line
/// in [`frame_order`], and `WF_FRAME_WORDS`, the words of a frame after its header.
fn frame_code(ports: &[HeaderPort], state: &[bool]) -> String {
    assert_eq!(
        state.len(),
        ports.len(),
        "ShimOptions::state names every port"
    );
    let is_state = |i: usize| state[i];
    let bytes = |i: usize| ports[i].storage_bytes();
    let inputs: Vec<usize> = (0..ports.len()).filter(|&i| ports[i].input).collect();
    let outputs: Vec<usize> = (0..ports.len())
        .filter(|&i| !ports[i].input && !is_state(i))
        .collect();
    let mut k = 0;
    let mut set = String::new();
    for i in frame_order(&inputs, bytes) {
        let p = &ports[i];
        let m = &p.member;
        match bytes(i) {
            1 => set.push_str(&format!("    m->top->{m} = (CData)f[{k}];\n")),
            2 => set.push_str(&format!("    m->top->{m} = (SData)f[{k}];\n")),
            4 => set.push_str(&format!("    m->top->{m} = (IData)f[{k}];\n")),
            8 => set.push_str(&format!("    m->top->{m} = f[{k}];\n")),
            _ => {
                let n32 = p.width.div_ceil(32);
                set.push_str(&format!(
                    "    std::memcpy(m->top->{m}.data(), f + {k}, {});\n    \
                     m->top->{m}[{}] &= {:#x}u;\n",
                    n32 * 4,
                    n32 - 1,
                    top_mask32(p.width)
                ));
            }
        }
        k += frame_words(p.width);
    }
    let mut diff = String::new();
    for i in frame_order(&outputs, bytes) {
        let p = &ports[i];
        let m = &p.member;
        if p.width <= 64 {
            diff.push_str(&format!(
                "    d |= ((uint64_t)m->top->{m} & {:#x}ull) ^ f[{k}];\n",
                u64::MAX >> (64 - p.width)
            ));
        } else {
            let n32 = p.width.div_ceil(32);
            diff.push_str(&format!(
                "    {{\n        uint32_t w[{n32}];\n        std::memcpy(w, f + {k}, {});\n        \
                 for (int j = 0; j < {}; ++j) d |= m->top->{m}[j] ^ w[j];\n        \
                 d |= (m->top->{m}[{}] & {:#x}u) ^ w[{}];\n    }}\n",
                n32 * 4,
                n32 - 1,
                n32 - 1,
                top_mask32(p.width),
                n32 - 1
            ));
        }
        k += frame_words(p.width);
    }
    format!(
        "const uint64_t WF_FRAME_WORDS = {k};\n\
         inline void wf_frame_inputs(WfModel* m, const uint64_t* f) {{\n{set}}}\n\
         inline uint64_t wf_frame_diff(const WfModel* m, const uint64_t* f) {{\n    \
         uint64_t d = 0;\n{diff}    return d;\n}}\n"
    )
}

/// The valid bits of the last 32-bit word of a `width`-bit port.
fn top_mask32(width: u32) -> u32 {
    match width % 32 {
        0 => u32::MAX,
        r => (1 << r) - 1,
    }
}

/// A mutant schema's selector input (`crate::mutant_schema::SELECTOR`); like `clk`, driven
/// by the shim and not in the port table.
pub const MUTANT_PORT: &str = crate::mutant_schema::SELECTOR;

/// The name of a co-simulation wrapper's state-sampling input (see
/// [`ShimOptions::sample_port`]); like `clk`, driven by the shim and not in the port table.
pub const SAMPLE_PORT: &str = "wf_sample";

/// The shim source for model class `prefix` (e.g. `Vwf`) with `ports` in table order
/// (the unit's port-list order; `clk` and `wf_sample` are driven by the shim and are not
/// in the table).
pub fn generate(prefix: &str, ports: &[HeaderPort], opts: &ShimOptions) -> String {
    let mut shim = generate_base(prefix, ports, opts);
    if opts.mutant_port {
        shim.push_str(&format!(
            r#"
// Mutant schema: which of the design's mutants is switched on (0: none). Set before the
// first cycle; the next wf_eval settles the logic with it.
WF_API void wf_set_mutant(void* p, uint32_t k) {{
    WfModel* m = static_cast<WfModel*>(p);
    if (m->top) m->top->{MUTANT_PORT} = k;
}}
"#
        ));
    }
    shim
}

fn generate_base(prefix: &str, ports: &[HeaderPort], opts: &ShimOptions) -> String {
    let (direct_eval, x_seed) = (opts.direct_eval, opts.x_seed);
    let edge_eval = opts.edge_eval.as_deref().filter(|_| direct_eval);
    // Before the model is constructed: its constructor draws the initial values.
    let x_init = x_seed.map_or(String::new(), |seed| {
        format!(
            "m->ctx->randReset(2);\n        m->ctx->randSeed({});\n        ",
            seed % (1 << 31)
        )
    });
    let mut table = String::new();
    let mut ptrs = String::new();
    for (i, p) in ports.iter().enumerate() {
        table.push_str(&format!(
            "    {{\"{}\", {}u, {}, {}u}},\n",
            p.name,
            p.width,
            if p.input { 1 } else { 0 },
            p.storage_bytes()
        ));
        let expr = if p.width > 64 {
            format!("m->top->{}.data()", p.member)
        } else {
            format!("&m->top->{}", p.member)
        };
        ptrs.push_str(&format!("        case {i}: return (void*)({expr});\n"));
    }
    format!(
        r#"// Generated by warpforge-cosim (shim version {SHIM_VERSION}); do not edit.
#include "{prefix}.h"
#include "verilated.h"
#include "verilated_vcd_c.h"
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#define WF_API extern "C" __attribute__((visibility("default")))
#define WF_DIRECT_EVAL {direct}
#define WF_SAMPLE_PORT {sample}
#define WF_EDGE_EVAL {edge}
#define WF_TRACING {tracing}
#if WF_DIRECT_EVAL
#include "{prefix}___024root.h"
{direct_sig};  // defined in the same unity file, after this one
#endif
#if WF_EDGE_EVAL
#include "{prefix}__Syms.h"
{edge_fn}#endif

namespace {{
struct WfAbort {{}};
// The message of the last $finish/$stop/fatal on this thread (eval runs on the caller's
// thread, so the hook and the shim call that observes it are on the same thread).
thread_local char wf_msg[4096];
thread_local int wf_msg_set;
// What the model printed during the current call ($display, $write, the runtime's own
// messages: the runtime archive is built with -DVL_PRINTF=wf_vl_printf). A $stop or fatal
// error's message carries it (a check's `$display("%m: illegal ..."); $stop;` becomes one
// report naming the instance); otherwise it goes on to stdout when the call returns, as
// Verilator would have printed it. Per thread, as the hooks run on the caller's thread.
thread_local std::string wf_out;
// How many threads' `wf_out` are not empty: a plain load lets a call skip the
// thread-local lookup (a function call in a dlopen'ed library) when nothing was printed.
std::atomic<int> wf_out_pending{{0}};
// Beyond this, the older text goes to stdout (an error's message keeps the newest).
const size_t WF_OUT_MAX = 1 << 16;
// An error's message keeps at most this much of the text printed before it (the newest:
// a check prints its reason last); the whole text then also goes to stdout.
const size_t WF_MSG_PRINTED_MAX = 3000;

// Text printed so far on this thread: on to stdout.
void wf_flush_printed() {{
    if (wf_out.empty()) return;
    std::fwrite(wf_out.data(), 1, wf_out.size(), stdout);
    std::fflush(stdout);
    wf_out.clear();
    wf_out_pending.fetch_sub(1, std::memory_order_relaxed);
}}

// The same, skipping the thread-local lookup when no thread has text waiting.
inline void wf_flush_if_pending() {{
    if (wf_out_pending.load(std::memory_order_relaxed)) wf_flush_printed();
}}

// `wf_out` on one line ("; " between its lines), then emptied. When it is longer than an
// error message can hold, the whole text goes to stdout and the message keeps its end.
std::string wf_take_printed() {{
    std::string s;
    for (char c : wf_out) {{
        if (c == '\n') {{
            if (!s.empty() && s.back() != ' ') s += "; ";
        }} else {{
            s += c;
        }}
    }}
    while (!s.empty() && (s.back() == ' ' || s.back() == ';')) s.pop_back();
    if (s.size() > WF_MSG_PRINTED_MAX) {{
        wf_flush_printed();
        s = "(the whole text on stdout) ..." + s.substr(s.size() - WF_MSG_PRINTED_MAX);
    }} else if (!wf_out.empty()) {{
        wf_out.clear();
        wf_out_pending.fetch_sub(1, std::memory_order_relaxed);
    }}
    return s;
}}

void wf_note(const char* what, const char* filename, int linenum, const char* msg) {{
    if (wf_msg_set) return;  // keep the first
    wf_msg_set = 1;
    // The error's own message (a runtime fatal's), then what was printed before it.
    std::string text = msg ? msg : "";
    std::string printed = wf_take_printed();
    if (!printed.empty()) text += (text.empty() ? "" : "; printed before it: ") + printed;
    const char* sep = text.empty() ? "" : ": ";
    if (filename && filename[0]) {{
        std::snprintf(wf_msg, sizeof wf_msg, "%s at %s:%d%s%s", what, filename, linenum, sep,
                      text.c_str());
    }} else {{
        std::snprintf(wf_msg, sizeof wf_msg, "%s%s%s", what, sep, text.c_str());
    }}
}}

struct WfPort {{ const char* name; uint32_t width; int input; uint32_t bytes; }};
const WfPort wf_ports[] = {{
{table}    {{nullptr, 0u, 0, 0u}}
}};
const uint32_t wf_nports = {nports}u;

struct WfModel {{
    VerilatedContext* ctx;
    {prefix}* top;
    VerilatedVcdC* tfp;
    uint64_t cycle;
    int trace_capable;
    int inited;  // the first eval() (initialisation) has run
    int failed;  // 0 ok, 1 $finish, 2 $stop, 3 fatal
    char err[4096];
}};

int wf_fail(WfModel* m, int code) {{
    m->failed = code;
    if (wf_msg_set) {{
        std::snprintf(m->err, sizeof m->err, "%s", wf_msg);
    }} else {{
        std::snprintf(m->err, sizeof m->err, "%s", code == 1 ? "$finish" : "error");
    }}
    wf_msg_set = 0;
    // Text printed after a $finish in the same call: on to stdout.
    wf_flush_if_pending();
    if (m->tfp) m->tfp->flush();
    return code;
}}

// Verilator's runtime reaches "the" context through a thread-local pointer
// (Verilated::threadContextp(): the $finish/$stop/fatal hooks below, scope registration and
// removal for %m). Several instances live on one thread (a run and its VCD re-run), so
// every entry point makes its instance's context current first; otherwise a hook marks
// another instance, and freeing an instance unregisters its scopes through a context that
// may already be deleted (a use-after-free that hangs in the runtime's mutex).
inline void wf_enter(WfModel* m) {{
    if (m->ctx && Verilated::threadContextp() != m->ctx) Verilated::threadContextp(m->ctx);
}}

// Evaluate with what the model has: `edge`, only the clock rose since the last
// evaluation (the inputs are unchanged). The first evaluation of an instance, and every one
// while a VCD is open, go through `eval()`.
inline void wf_eval_model(WfModel* m, bool edge) {{
    (void)edge;
#if WF_DIRECT_EVAL
    if (m->inited && !m->tfp) {{
#if WF_EDGE_EVAL
        if (edge) {{
            {edge_fn_name}(m->top->rootp);
            return;
        }}
#endif
        {prefix}___024root___eval(m->top->rootp);
        return;
    }}
#endif
    m->top->eval();
    m->inited = 1;
}}

inline int wf_run(WfModel* m, bool edge) {{
    wf_enter(m);
    // Text printed outside a call (never part of this call's error).
    wf_flush_if_pending();
    try {{
        wf_eval_model(m, edge);
    }} catch (const WfAbort&) {{
        return wf_fail(m, wf_msg[0] == '$' && wf_msg[1] == 's' ? 2 : 3);
    }} catch (const std::exception& e) {{
        wf_note("C++ exception", nullptr, 0, e.what());
        return wf_fail(m, 3);
    }}
    if (m->ctx->gotFinish()) return wf_fail(m, 1);
    wf_flush_if_pending();
    return 0;
}}

// A co-simulation frame (cosim/src/lockstep/pipelined.rs) after its header word: the
// inputs, then the compared outputs, in the order of `shim::frame_order`.
{frame_code}}}  // namespace

// The runtime's VL_PRINTF (see `wf_out`).
extern "C" int wf_vl_printf(const char* fmt, ...) {{
    va_list ap;
    va_start(ap, fmt);
    va_list again;
    va_copy(again, ap);
    int n = std::vsnprintf(nullptr, 0, fmt, ap);
    va_end(ap);
    if (n > 0) {{
        if (wf_out.size() + (size_t)n > WF_OUT_MAX) wf_flush_printed();
        if (wf_out.empty()) wf_out_pending.fetch_add(1, std::memory_order_relaxed);
        size_t at = wf_out.size();
        wf_out.resize(at + (size_t)n + 1);
        std::vsnprintf(&wf_out[at], (size_t)n + 1, fmt, again);
        wf_out.resize(at + (size_t)n);
    }}
    va_end(again);
    return n;
}}

// Verilator runtime hooks: the runtime archive is built with -DVL_USER_FINISH,
// -DVL_USER_STOP and -DVL_USER_FATAL, so these definitions replace its exit/abort paths.
void vl_finish(const char* filename, int linenum, const char* hier) {{
    (void)hier;
    wf_note("$finish", filename, linenum, nullptr);
    Verilated::threadContextp()->gotFinish(true);
}}
void vl_stop(const char* filename, int linenum, const char* hier) {{
    (void)hier;
    wf_note("$stop", filename, linenum, nullptr);
    Verilated::threadContextp()->gotError(true);
    Verilated::threadContextp()->gotFinish(true);
    throw WfAbort{{}};
}}
void vl_fatal(const char* filename, int linenum, const char* hier, const char* msg) {{
    (void)hier;
    wf_note("fatal", filename, linenum, msg);
    Verilated::threadContextp()->gotError(true);
    Verilated::threadContextp()->gotFinish(true);
    throw WfAbort{{}};
}}

WF_API uint32_t wf_shim_version() {{ return {SHIM_VERSION}u; }}
WF_API uint32_t wf_port_count() {{ return wf_nports; }}
WF_API const char* wf_port_name(uint32_t i) {{ return i < wf_nports ? wf_ports[i].name : nullptr; }}
WF_API uint32_t wf_port_width(uint32_t i) {{ return i < wf_nports ? wf_ports[i].width : 0; }}
WF_API int wf_port_input(uint32_t i) {{ return i < wf_nports ? wf_ports[i].input : 0; }}
WF_API uint32_t wf_port_bytes(uint32_t i) {{ return i < wf_nports ? wf_ports[i].bytes : 0; }}

WF_API void* wf_new(int trace_capable) {{
    wf_msg_set = 0;
    WfModel* m = new WfModel();
    try {{
        m->ctx = new VerilatedContext;
        m->ctx->debug(0);
        m->ctx->fatalOnError(true);
        m->trace_capable = trace_capable;
        if (trace_capable) m->ctx->traceEverOn(true);
        {x_init}m->top = new {prefix}(m->ctx, "TOP");
        m->top->clk = 0;
#if WF_SAMPLE_PORT
        m->top->wf_sample = 0;  // (X initialisation may have set it: no edge would come)
#endif
    }} catch (...) {{
        wf_fail(m, 3);
    }}
    return m;
}}

WF_API void wf_free(void* p) {{
    WfModel* m = static_cast<WfModel*>(p);
    if (!m) return;
    wf_enter(m);
    if (m->tfp) {{ m->tfp->close(); delete m->tfp; }}
    if (m->top && !m->failed) {{
        try {{ m->top->final(); }} catch (...) {{}}
        // A $stop or fatal error in a `final` block: nobody will ask, so say it.
        if (wf_msg_set) std::fprintf(stdout, "%s\n", wf_msg);
    }}
    // What a `final` block printed goes out now, never into another instance's error.
    wf_flush_printed();
    wf_msg_set = 0;
    delete m->top;
    delete m->ctx;
    // No dangling current context: the next call enters its own, or the default one.
    Verilated::threadContextp(nullptr);
    delete m;
}}

WF_API void* wf_port_ptr(void* p, uint32_t i) {{
    WfModel* m = static_cast<WfModel*>(p);
    if (!m->top) return nullptr;
    switch (i) {{
{ptrs}        default: return nullptr;
    }}
}}

WF_API int wf_failed(void* p) {{ return static_cast<WfModel*>(p)->failed; }}
WF_API const char* wf_last_error(void* p) {{ return static_cast<WfModel*>(p)->err; }}
WF_API void wf_set_cycle(void* p, uint64_t cycle) {{ static_cast<WfModel*>(p)->cycle = cycle; }}

// Clock low, settle the logic after new inputs (combinational outputs become valid).
WF_API int wf_eval(void* p) {{
    WfModel* m = static_cast<WfModel*>(p);
    if (m->failed) return m->failed;
    m->top->clk = 0;
    m->ctx->time(m->cycle * 10);
    int rc = wf_run(m, false);
    if (m->tfp && !rc) m->tfp->dump(m->cycle * 10);
    return rc;
}}

// Rising clock edge: the flops take the inputs set before the last wf_eval.
WF_API int wf_edge(void* p) {{
    WfModel* m = static_cast<WfModel*>(p);
    if (m->failed) return m->failed;
    m->top->clk = 1;
    m->ctx->time(m->cycle * 10 + 5);
    int rc = wf_run(m, true);
    if (m->tfp && !rc) m->tfp->dump(m->cycle * 10 + 5);
    m->cycle++;
    return rc;
}}

// Latch the internal state into the debug-state ports (the wrapper's `always @(posedge
// wf_sample)`); the clock stays low, nothing else changes.
WF_API int wf_sample_state(void* p) {{
    WfModel* m = static_cast<WfModel*>(p);
    if (m->failed) return m->failed;
#if WF_SAMPLE_PORT
    m->top->wf_sample = 1;
    int rc = wf_run(m, false);
    m->top->wf_sample = 0;
    return rc;
#else
    return 0;
#endif
}}

// The words of a plain frame after its header: the caller checks it against its own frame
// layout once.
WF_API uint64_t wf_frame_words() {{ return WF_FRAME_WORDS; }}

// The plain frames of a co-simulation batch from w[*pos] (each a header word 0, then the
// frame's words), in this loop: for each, what `wf_eval`, a comparison of the outputs and
// `wf_edge` would do, without a call per half cycle: the inputs set, the logic settled with
// the clock low, the compared outputs checked, the clock edge (with the VCD dumps when one
// is open). Stops at a frame whose header is not 0, at a frame that does not fit before n,
// or at n, with *pos at it. Returns 0; -1 when an output of the frame at *pos differs (its
// inputs settled, its edge not taken); or the failure code, *pos at the frame it came from.
WF_API int wf_check_frames(void* p, const uint64_t* w, uint64_t n, uint64_t* pos_io) {{
    WfModel* m = static_cast<WfModel*>(p);
    if (m->failed) return m->failed;
    wf_enter(m);
    wf_flush_if_pending();
    uint64_t pos = *pos_io;
    int rc = 0;
    try {{
        while (pos + 1 + WF_FRAME_WORDS <= n && w[pos] == 0) {{
            const uint64_t* f = w + pos + 1;
            wf_frame_inputs(m, f);
            m->top->clk = 0;
            m->ctx->time(m->cycle * 10);
            wf_eval_model(m, false);
            if (m->ctx->gotFinish()) {{ rc = 1; break; }}
            if (m->tfp) m->tfp->dump(m->cycle * 10);
            if (wf_frame_diff(m, f)) {{ rc = -1; break; }}
            m->top->clk = 1;
            m->ctx->time(m->cycle * 10 + 5);
            wf_eval_model(m, true);
            if (m->ctx->gotFinish()) {{ m->cycle++; rc = 1; break; }}
            if (m->tfp) m->tfp->dump(m->cycle * 10 + 5);
            m->cycle++;
            pos += 1 + WF_FRAME_WORDS;
        }}
    }} catch (const WfAbort&) {{
        *pos_io = pos;
        return wf_fail(m, wf_msg[0] == '$' && wf_msg[1] == 's' ? 2 : 3);
    }} catch (const std::exception& e) {{
        *pos_io = pos;
        wf_note("C++ exception", nullptr, 0, e.what());
        return wf_fail(m, 3);
    }}
    *pos_io = pos;
    if (rc == 1) return wf_fail(m, 1);
    wf_flush_if_pending();
    return rc;
}}

WF_API int wf_trace_open(void* p, const char* path) {{
    WfModel* m = static_cast<WfModel*>(p);
    if (!m->top) return -1;
    wf_enter(m);
    if (!m->trace_capable) {{
        std::snprintf(m->err, sizeof m->err, "model was not created trace-capable");
        return -1;
    }}
#if WF_TRACING
    if (m->tfp) {{ m->tfp->close(); delete m->tfp; m->tfp = nullptr; }}
    m->tfp = new VerilatedVcdC;
    m->top->trace(m->tfp, 99);
    m->tfp->open(path);
    if (!m->tfp->isOpen()) {{
        delete m->tfp;
        m->tfp = nullptr;
        std::snprintf(m->err, sizeof m->err, "cannot open %s", path);
        return -1;
    }}
    return 0;
#else
    (void)path;
    std::snprintf(m->err, sizeof m->err,
                  "model was built without trace code (BuildOptions::tracing off)");
    return -1;
#endif
}}

WF_API void wf_trace_dump(void* p, uint64_t time) {{
    WfModel* m = static_cast<WfModel*>(p);
    if (m->tfp) m->tfp->dump(time);
}}

WF_API void wf_trace_close(void* p) {{
    WfModel* m = static_cast<WfModel*>(p);
    if (m->tfp) {{ m->tfp->close(); delete m->tfp; m->tfp = nullptr; }}
}}
"#,
        nports = ports.len(),
        direct = direct_eval as u8,
        sample = opts.sample_port as u8,
        edge = edge_eval.is_some() as u8,
        tracing = opts.tracing as u8,
        edge_fn = edge_eval.unwrap_or_default(),
        edge_fn_name = crate::edge_eval::EDGE_EVAL_FN,
        direct_sig = direct_eval_signature(prefix),
        frame_code = frame_code(ports, &opts.state),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_verilator_port_declarations() {
        let h = "    VL_IN8(&__SYM__set,0,0);\n    VL_IN8(&clk,0,0);\n    VL_IN16(&a,15,0);\n    VL_OUTW(&wide_out,69,0,3);\n    VL_OUT64(&q,40,0);\n  VL_IN(&x,31,0);";
        let p = parse_header_ports(h);
        assert_eq!(p.len(), 6);
        assert_eq!(
            (p[0].name.as_str(), p[0].member.as_str()),
            ("set", "__SYM__set")
        );
        let p = &p[1..];
        assert_eq!(
            p[2],
            HeaderPort {
                name: "wide_out".into(),
                member: "wide_out".into(),
                input: false,
                width: 70
            }
        );
        assert_eq!(p[4].width, 32);
        assert!(p[4].input);
        assert_eq!(p[2].storage_bytes(), 12);
        assert_eq!(p[3].storage_bytes(), 8);
    }
}
