{% extends "_module.v" %}
{%- block body %}
    // Cycle-exact twin of warpforge_model::units::simt_stack::SimtStackSpe: the names below
    // are the model's (entries, sp, done, err_overflow, err_pc; decide() and tick()).
    //
    // Decisions where the seed is silent (spec §8): A1 END_PC bottom entry, A2 taken group
    // pushed first, fall-through on top; A4 reuse rule; A11 a push that does not fit sets
    // the sticky err_overflow and leaves the stack unchanged; A12 v2 `done` mask of exited
    // threads ANDed into every mask read, an empty effective TOS pops itself on an idle
    // cycle. A launch clears the stack, the done mask and the error flags.

    // ---- constants ---------------------------------------------------------------------
    localparam integer DEPTH_W = $clog2(DEPTH + 1);    // width of sp (the depth output)
    localparam integer IDX_W   = $clog2(DEPTH);        // width of an entry index
    localparam integer ENTRY_W = 2 * PC_W + WARP_SIZE; // one dbg_stack entry {pc, rpc, mask}
    localparam [DEPTH_W-1:0] SP_FULL = DEPTH[DEPTH_W-1:0];

    // upd_kind encoding (UpdKind)
    localparam [1:0] KIND_SEQ    = 2'd0;  // ALU or memory: sequential
    // (2'd1 is the conditional branch: the case default below)
    localparam [1:0] KIND_JUMP   = 2'd2;  // unconditional jump
    localparam [1:0] KIND_EXIT   = 2'd3;  // EXIT: the upd_taken lanes retire

    // ---- state -------------------------------------------------------------------------
    // The entry storage has no reset: entries at and above sp are never read (tos_* read 0
    // when the stack is empty, dbg_stack shows them as 0), so only sp, done and the flags
    // are reset.
    reg [PC_W-1:0]      entries_pc   [0:DEPTH-1];
    reg [PC_W-1:0]      entries_rpc  [0:DEPTH-1];
    reg [WARP_SIZE-1:0] entries_mask [0:DEPTH-1];
    reg [DEPTH_W-1:0]   sp;              // number of entries; the TOS is entries[sp-1]
    reg [WARP_SIZE-1:0] done;            // threads that have exited (A12 v2)
    reg                 err_overflow_q;  // sticky
    reg                 err_pc_q;        // sticky

    // ---- the top of stack (meaningless while the stack is empty) ------------------------
    wire                 empty    = (sp == {DEPTH_W{1'b0}});
    wire [IDX_W-1:0]     top      = sp[IDX_W-1:0] - 1'b1;  // sp-1 for 1 <= sp <= DEPTH
    wire [PC_W-1:0]      top_pc   = entries_pc[top];
    wire [PC_W-1:0]      top_rpc  = entries_rpc[top];
    wire [WARP_SIZE-1:0] top_mask = entries_mask[top];
    // The effective TOS mask: the entry's mask without exited threads (tos_mask()).
    wire [WARP_SIZE-1:0] live     = empty ? {WARP_SIZE{1'b0}} : (top_mask & ~done);

    // ---- decide(): what this cycle does -----------------------------------------------
    // A launch wins over an update; nothing happens while rst_n is low, so every event
    // output reads 0 then.
    wire run       = rst_n && !launch_valid;
    wire do_launch = rst_n && launch_valid;
    // The update is accepted only from the TOS PC of a schedulable warp, else err_pc.
    wire upd_ok    = run && upd_valid && !empty && (upd_pc == top_pc) && (|live);
    wire do_err_pc = run && upd_valid && !upd_ok;
    // Idle cycle with an empty effective TOS: it pops itself (one entry per cycle).
    wire auto_pop  = run && !upd_valid && !empty && !(|live);

    // The live threads grouped by their next PC (spec §9.4): fall-through (nt) and taken
    // (tk). One group is (g_pc, g_mask); g_none: no thread continues; g_two: divergence.
    wire [WARP_SIZE-1:0] nt_mask = live & ~upd_taken;
    wire [WARP_SIZE-1:0] tk_mask = live & upd_taken;
    reg                  g_none;
    reg                  g_two;
    reg [PC_W-1:0]       g_pc;
    reg [WARP_SIZE-1:0]  g_mask;
    always @* begin
        g_none = 1'b0;
        g_two  = 1'b0;
        g_pc   = upd_next;
        g_mask = live;
        case (upd_kind)
            KIND_SEQ:  g_pc = upd_next;
            KIND_JUMP: g_pc = upd_target;
            KIND_EXIT: begin
                // the upd_taken lanes retire; the others continue sequentially
                g_mask = nt_mask;
                g_none = !(|nt_mask);
            end
            default: begin  // KIND_BRANCH
                if ((|nt_mask) && (|tk_mask)) begin
                    // both directions taken: two groups, unless both go to the same PC
                    g_two = (upd_next != upd_target);
                end else if (|tk_mask) begin
                    g_pc   = upd_target;
                    g_mask = tk_mask;
                end
            end
        endcase
    end

    // One group: continue at g_pc, or pop when it reaches the TOS RPC (or nobody is left).
    wire g_at_rpc = (g_pc == top_rpc);
    wire upd_pop  = upd_ok && !g_two && (g_none || g_at_rpc);
    wire upd_cont = upd_ok && !g_two && !g_none && !g_at_rpc;
    wire upd_div  = upd_ok && g_two;

    // Two groups, reconverging at X = upd_rpc. A group already at X is not pushed: its
    // threads wait in the reconvergence entry.
    //  - X != TOS RPC (new_rc): the TOS becomes the reconvergence entry (pc = X); push the
    //    taken group, then the fall-through group on top.
    //  - X == TOS RPC (reuse rule): the TOS takes the first of (tk, nt) not at X; the other
    //    is pushed unless it is at X.
    wire       tk_in  = (upd_target != upd_rpc);
    wire       nt_in  = (upd_next != upd_rpc);
    wire       new_rc = (upd_rpc != top_rpc);
    wire [1:0] n_push = new_rc ? ({1'b0, tk_in} + {1'b0, nt_in}) : {1'b0, tk_in && nt_in};

    wire [DEPTH_W:0] sp_div   = {1'b0, sp} + { {(DEPTH_W - 1){1'b0}}, n_push };
    wire             overflow = upd_div && (sp_div > {1'b0, SP_FULL});  // the push is dropped
    wire             div_ok   = upd_div && !overflow;

    // The rewritten TOS after a divergence (its rpc is unchanged in both cases).
    wire [PC_W-1:0]      div_tos_pc   = new_rc ? upd_rpc  : (tk_in ? upd_target : upd_next);
    wire [WARP_SIZE-1:0] div_tos_mask = new_rc ? top_mask : (tk_in ? tk_mask : nt_mask);
    // The entry pushed at sp (the taken group only when it is the first of two pushes under
    // new_rc), and the one pushed at sp+1 (always the fall-through group).
    wire                 push0_tk     = new_rc && tk_in;
    wire [PC_W-1:0]      push0_pc     = push0_tk ? upd_target : upd_next;
    wire [WARP_SIZE-1:0] push0_mask   = push0_tk ? tk_mask : nt_mask;

    // Threads retired by an EXIT (an accepted EXIT always pops or continues).
    wire [WARP_SIZE-1:0] exiting = (upd_ok && upd_kind == KIND_EXIT) ? tk_mask
                                                                       : {WARP_SIZE{1'b0}};

    // ---- tick(): control state ---------------------------------------------------------
    always @(posedge clk) begin
        if (!rst_n) begin
            sp             <= {DEPTH_W{1'b0}};
            done           <= {WARP_SIZE{1'b0}};
            err_overflow_q <= 1'b0;
            err_pc_q       <= 1'b0;
        end else if (launch_valid) begin
            sp             <= { {(DEPTH_W - 1){1'b0}}, 1'b1 };
            done           <= {WARP_SIZE{1'b0}};
            err_overflow_q <= 1'b0;
            err_pc_q       <= 1'b0;
        end else begin
            if (upd_pop || auto_pop) begin
                sp <= sp - 1'b1;
            end else if (div_ok) begin
                sp <= sp_div[DEPTH_W-1:0];
            end
            done           <= done | exiting;
            err_overflow_q <= err_overflow_q | overflow;
            err_pc_q       <= err_pc_q | do_err_pc;
        end
    end

    // ---- tick(): entry storage (write ports: entry 0, the TOS, sp and sp+1) -------------
    always @(posedge clk) begin
        if (do_launch) begin
            entries_pc[0]   <= launch_pc;
            entries_rpc[0]  <= launch_rpc;
            entries_mask[0] <= launch_mask;
        end
        if (upd_cont || div_ok) begin
            entries_pc[top]   <= upd_cont ? g_pc : div_tos_pc;
            entries_mask[top] <= upd_cont ? g_mask : div_tos_mask;
        end
        if (div_ok && n_push != 2'd0) begin
            entries_pc[sp[IDX_W-1:0]]   <= push0_pc;
            entries_rpc[sp[IDX_W-1:0]]  <= upd_rpc;
            entries_mask[sp[IDX_W-1:0]] <= push0_mask;
        end
        if (div_ok && n_push == 2'd2) begin
            entries_pc[sp[IDX_W-1:0] + 1'b1]   <= upd_next;
            entries_rpc[sp[IDX_W-1:0] + 1'b1]  <= upd_rpc;
            entries_mask[sp[IDX_W-1:0] + 1'b1] <= nt_mask;
        end
    end

    // ---- outputs -----------------------------------------------------------------------
    assign tos_valid    = |live;
    assign tos_pc       = empty ? {PC_W{1'b0}} : top_pc;
    assign tos_rpc      = empty ? {PC_W{1'b0}} : top_rpc;
    assign tos_mask     = live;
    assign depth        = sp;
    assign ev_push2     = div_ok && (n_push == 2'd2);
    assign ev_push1     = div_ok && (n_push == 2'd1);
    assign ev_pop       = upd_pop || auto_pop;
    assign ev_div       = upd_div;
    assign err_overflow = err_overflow_q;
    assign err_pc       = err_pc_q;
    assign dbg_done     = done;

    // dbg_stack: entry i at bits [i*ENTRY_W +: ENTRY_W] as {pc, rpc, mask}; entries at and
    // above sp read 0.
    genvar i;
    generate
        for (i = 0; i < DEPTH; i = i + 1) begin : g_dbg
            assign dbg_stack[i*ENTRY_W +: ENTRY_W] =
                (sp > i) ? {entries_pc[i], entries_rpc[i], entries_mask[i]} : {ENTRY_W{1'b0}};
        end
    endgenerate
{% endblock %}
