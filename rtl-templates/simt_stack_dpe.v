{% extends "_module.v" %}
{%- block body %}
    // Cycle-exact twin of warpforge_model::units::simt_stack_dpe::SimtStackDpe: the names
    // below are the model's (entries with slots L/R and a shared rpc, sp, done, err_*;
    // decide() and tick()).
    //
    // Each entry holds two paths (slots L and R, each {valid, pc, mask}) and one RPC. Both
    // TOS slots are schedulable; upd_side says which one issued. Decisions where the seed is
    // silent (spec §8): A2 fall-through group into slot L, taken group into slot R; A3
    // explicit slot valid bits, an invalid slot stored as all zeros; A4 a divergence at the
    // TOS RPC runs in place when the sibling slot is not live, else arrive-and-push; A11 a
    // push that does not fit sets the sticky err_overflow and leaves the stack unchanged;
    // A12 v2 `done` mask of exited threads ANDed into every mask read, a slot with no live
    // thread counts as invalid, a TOS with no live slot pops itself on an idle cycle. A
    // launch clears the stack, the done mask and the error flags; its path goes into slot L.

    // ---- constants ---------------------------------------------------------------------
    localparam integer DEPTH_W = $clog2(DEPTH + 1);  // width of sp (the depth output)
    localparam integer IDX_W   = $clog2(DEPTH);      // width of an entry index
    localparam integer SLOT_W  = 1 + PC_W + WARP_SIZE;   // one slot {mask, pc, valid}
    localparam integer ENTRY_W = 2 * SLOT_W + PC_W;      // one entry {rpc, R slot, L slot}
    localparam [DEPTH_W-1:0] SP_FULL = DEPTH[DEPTH_W-1:0];

    // upd_kind encoding (UpdKind)
    localparam [1:0] KIND_SEQ  = 2'd0;  // ALU or memory: sequential
    // (2'd1 is the conditional branch: the case default below)
    localparam [1:0] KIND_JUMP = 2'd2;  // unconditional jump
    localparam [1:0] KIND_EXIT = 2'd3;  // EXIT: the upd_taken lanes retire

    // ---- state -------------------------------------------------------------------------
    // The entry storage has no reset: entries at and above sp are never read (the TOS
    // outputs read 0 when the stack is empty, dbg_stack shows them as 0), and every entry
    // is written whole when it is pushed or launched.
    reg                 entries_l_valid [0:DEPTH-1];
    reg [PC_W-1:0]      entries_l_pc    [0:DEPTH-1];
    reg [WARP_SIZE-1:0] entries_l_mask  [0:DEPTH-1];
    reg                 entries_r_valid [0:DEPTH-1];
    reg [PC_W-1:0]      entries_r_pc    [0:DEPTH-1];
    reg [WARP_SIZE-1:0] entries_r_mask  [0:DEPTH-1];
    reg [PC_W-1:0]      entries_rpc     [0:DEPTH-1];
    reg [DEPTH_W-1:0]   sp;              // number of entries; the TOS is entries[sp-1]
    reg [WARP_SIZE-1:0] done;            // threads that have exited (A12 v2)
    reg                 err_overflow_q;  // sticky
    reg                 err_pc_q;        // sticky
    reg                 err_side_q;      // sticky

    // ---- the top of stack (meaningless while the stack is empty) ------------------------
    wire                 empty      = (sp == {DEPTH_W{1'b0}});
    wire [IDX_W-1:0]     top        = sp[IDX_W-1:0] - 1'b1;  // sp-1 for 1 <= sp <= DEPTH
    wire                 top_l_valid = entries_l_valid[top];
    wire [PC_W-1:0]      top_l_pc    = entries_l_pc[top];
    wire [WARP_SIZE-1:0] top_l_mask  = entries_l_mask[top];
    wire                 top_r_valid = entries_r_valid[top];
    wire [PC_W-1:0]      top_r_pc    = entries_r_pc[top];
    wire [WARP_SIZE-1:0] top_r_mask  = entries_r_mask[top];
    wire [PC_W-1:0]      top_rpc     = entries_rpc[top];
    // Live threads of each TOS slot (path_mask()): 0 unless the slot is valid; a slot with
    // no live thread is treated as invalid everywhere (path_valid()).
    wire [WARP_SIZE-1:0] live_l = (!empty && top_l_valid) ? (top_l_mask & ~done)
                                                          : {WARP_SIZE{1'b0}};
    wire [WARP_SIZE-1:0] live_r = (!empty && top_r_valid) ? (top_r_mask & ~done)
                                                          : {WARP_SIZE{1'b0}};
    wire                 path_l = |live_l;
    wire                 path_r = |live_r;

    // The slot named by upd_side ("the slot") and its sibling.
    wire                 side_live    = upd_side ? path_r : path_l;
    wire                 sibling_live = upd_side ? path_l : path_r;
    wire [PC_W-1:0]      slot_pc      = upd_side ? top_r_pc : top_l_pc;
    wire [WARP_SIZE-1:0] slot_mask    = upd_side ? top_r_mask : top_l_mask;  // as stored
    wire [WARP_SIZE-1:0] live         = upd_side ? live_r : live_l;

    // ---- decide(): what this cycle does -----------------------------------------------
    // A launch wins over an update; nothing happens while rst_n is low, so every event
    // output reads 0 then.
    wire run       = rst_n && !launch_valid;
    wire do_launch = rst_n && launch_valid;
    // An update on an empty stack or from another PC than the slot's sets err_pc; from a
    // slot that is not live, err_side. Both hold the state.
    wire do_err_side = run && upd_valid && !empty && !side_live;
    wire do_err_pc   = run && upd_valid && (empty || (side_live && upd_pc != slot_pc));
    wire upd_ok      = run && upd_valid && !empty && side_live && (upd_pc == slot_pc);
    // Idle cycle with no live TOS slot: the TOS pops itself (one entry per cycle).
    wire auto_pop    = run && !upd_valid && !empty && !path_l && !path_r;

    // The slot's live threads grouped by their next PC (spec §9.4): fall-through (nt) and
    // taken (tk). One group is (g_pc, g_mask); g_none: no thread continues; g_two:
    // divergence.
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

    // One group: the slot continues at g_pc, or its path finishes when it reaches the TOS
    // RPC (or nobody is left): the slot is invalidated if the sibling is live, else the
    // TOS pops.
    wire finish     = upd_ok && !g_two && (g_none || g_pc == top_rpc);
    wire upd_cont   = upd_ok && !g_two && !finish;
    wire upd_inval  = finish && sibling_live;
    wire upd_pop    = finish && !sibling_live;

    // Two groups, reconverging at X = upd_rpc. The child entry holds the fall-through group
    // in L and the taken group in R; a group already at X gets no slot (its threads wait in
    // the parent).
    //  - X != TOS RPC (new_rc): the slot is parked at X (its stored mask kept), push the child.
    //  - X == TOS RPC, sibling not live: in place, the child's slots overwrite both TOS slots.
    //  - X == TOS RPC, sibling live: arrive-and-push, the slot is invalidated, push the child.
    wire upd_div     = upd_ok && g_two;
    wire new_rc      = (upd_rpc != top_rpc);
    wire div_inplace = upd_div && !new_rc && !sibling_live;
    wire overflow    = upd_div && !div_inplace && (sp == SP_FULL);  // the push is dropped
    wire push_ok     = upd_div && !div_inplace && !overflow;

    wire                 child_l_valid = (upd_next != upd_rpc);
    wire [PC_W-1:0]      child_l_pc    = child_l_valid ? upd_next : {PC_W{1'b0}};
    wire [WARP_SIZE-1:0] child_l_mask  = child_l_valid ? nt_mask : {WARP_SIZE{1'b0}};
    wire                 child_r_valid = (upd_target != upd_rpc);
    wire [PC_W-1:0]      child_r_pc    = child_r_valid ? upd_target : {PC_W{1'b0}};
    wire [WARP_SIZE-1:0] child_r_mask  = child_r_valid ? tk_mask : {WARP_SIZE{1'b0}};

    // The new value of the slot for continue / invalidate / push (the parent slot).
    reg                 slot_new_valid;
    reg [PC_W-1:0]      slot_new_pc;
    reg [WARP_SIZE-1:0] slot_new_mask;
    always @* begin
        if (upd_cont) begin
            slot_new_valid = 1'b1;
            slot_new_pc    = g_pc;
            slot_new_mask  = g_mask;
        end else if (push_ok && new_rc) begin
            slot_new_valid = 1'b1;
            slot_new_pc    = upd_rpc;
            slot_new_mask  = slot_mask;
        end else begin
            // invalidated (reached the RPC with a live sibling, or arrive-and-push)
            slot_new_valid = 1'b0;
            slot_new_pc    = {PC_W{1'b0}};
            slot_new_mask  = {WARP_SIZE{1'b0}};
        end
    end
    wire wr_slot = upd_cont || upd_inval || push_ok;  // writes the slot upd_side
    wire wr_l    = (wr_slot && !upd_side) || div_inplace;
    wire wr_r    = (wr_slot && upd_side) || div_inplace;

    // Threads retired by an EXIT (an accepted EXIT always continues, invalidates or pops).
    wire [WARP_SIZE-1:0] exiting = (upd_ok && upd_kind == KIND_EXIT) ? tk_mask
                                                                       : {WARP_SIZE{1'b0}};

    // ---- tick(): control state ---------------------------------------------------------
    always @(posedge clk) begin
        if (!rst_n) begin
            sp             <= {DEPTH_W{1'b0}};
            done           <= {WARP_SIZE{1'b0}};
            err_overflow_q <= 1'b0;
            err_pc_q       <= 1'b0;
            err_side_q     <= 1'b0;
        end else if (launch_valid) begin
            sp             <= { {(DEPTH_W - 1){1'b0}}, 1'b1 };
            done           <= {WARP_SIZE{1'b0}};
            err_overflow_q <= 1'b0;
            err_pc_q       <= 1'b0;
            err_side_q     <= 1'b0;
        end else begin
            if (upd_pop || auto_pop) begin
                sp <= sp - 1'b1;
            end else if (push_ok) begin
                sp <= sp + 1'b1;
            end
            done           <= done | exiting;
            err_overflow_q <= err_overflow_q | overflow;
            err_pc_q       <= err_pc_q | do_err_pc;
            err_side_q     <= err_side_q | do_err_side;
        end
    end

    // ---- tick(): entry storage (write ports: entry 0, the TOS slots, the entry at sp) ---
    always @(posedge clk) begin
        if (do_launch) begin
            entries_l_valid[0] <= 1'b1;
            entries_l_pc[0]    <= launch_pc;
            entries_l_mask[0]  <= launch_mask;
            entries_r_valid[0] <= 1'b0;
            entries_r_pc[0]    <= {PC_W{1'b0}};
            entries_r_mask[0]  <= {WARP_SIZE{1'b0}};
            entries_rpc[0]     <= launch_rpc;
        end
        if (wr_l) begin
            entries_l_valid[top] <= div_inplace ? child_l_valid : slot_new_valid;
            entries_l_pc[top]    <= div_inplace ? child_l_pc    : slot_new_pc;
            entries_l_mask[top]  <= div_inplace ? child_l_mask  : slot_new_mask;
        end
        if (wr_r) begin
            entries_r_valid[top] <= div_inplace ? child_r_valid : slot_new_valid;
            entries_r_pc[top]    <= div_inplace ? child_r_pc    : slot_new_pc;
            entries_r_mask[top]  <= div_inplace ? child_r_mask  : slot_new_mask;
        end
        if (push_ok) begin
            entries_l_valid[sp[IDX_W-1:0]] <= child_l_valid;
            entries_l_pc[sp[IDX_W-1:0]]    <= child_l_pc;
            entries_l_mask[sp[IDX_W-1:0]]  <= child_l_mask;
            entries_r_valid[sp[IDX_W-1:0]] <= child_r_valid;
            entries_r_pc[sp[IDX_W-1:0]]    <= child_r_pc;
            entries_r_mask[sp[IDX_W-1:0]]  <= child_r_mask;
            entries_rpc[sp[IDX_W-1:0]]     <= upd_rpc;
        end
    end

    // ---- outputs -----------------------------------------------------------------------
    assign l_valid       = path_l;
    assign l_pc          = path_l ? top_l_pc : {PC_W{1'b0}};
    assign l_mask        = live_l;
    assign r_valid       = path_r;
    assign r_pc          = path_r ? top_r_pc : {PC_W{1'b0}};
    assign r_mask        = live_r;
    assign tos_rpc       = empty ? {PC_W{1'b0}} : top_rpc;
    assign depth         = sp;
    assign num_paths     = {1'b0, path_l} + {1'b0, path_r};
    assign ev_push       = push_ok;
    assign ev_pop        = upd_pop || auto_pop;
    assign ev_inplace    = div_inplace;
    assign ev_div        = upd_div;
    assign ev_slot_inval = upd_inval || (push_ok && !new_rc);
    assign ev_sb_copy    = push_ok || upd_pop || auto_pop || div_inplace;
    assign err_overflow  = err_overflow_q;
    assign err_pc        = err_pc_q;
    assign err_side      = err_side_q;
    assign dbg_done      = done;

    // dbg_stack: entry i at bits [i*ENTRY_W +: ENTRY_W] as
    // {rpc, r_mask, r_pc, r_valid, l_mask, l_pc, l_valid}; entries at and above sp read 0.
    genvar i;
    generate
        for (i = 0; i < DEPTH; i = i + 1) begin : g_dbg
            assign dbg_stack[i*ENTRY_W +: ENTRY_W] = (sp > i)
                ? {entries_rpc[i], entries_r_mask[i], entries_r_pc[i], entries_r_valid[i],
                   entries_l_mask[i], entries_l_pc[i], entries_l_valid[i]}
                : {ENTRY_W{1'b0}};
        end
    endgenerate
{% endblock %}
