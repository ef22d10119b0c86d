{% extends "_module.v" %}
{%- block body %}
    // Cycle-exact twin of warpforge_model::units::simt_stack_dpe::SimtStackDpe: the names
    // below are the model's (entries with slots L/R and a shared rpc; top, top_in_q, ram,
    // sp, done, err_*; decide(), tick(), pop()).
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
    //
    // Storage (design.md §5): the TOS entry is the register top_e; the entries below it,
    // 0..sp-2, are in the RAM u_ram (wf_ram_dp, one write and one read port, RAM_WORDS =
    // DEPTH-1 entry words). A push writes the parent (the TOS with its issuing slot updated)
    // to word sp-1 (one write) and the child becomes the TOS; a pop from sp >= 2 fills the
    // TOS from word sp-2 (one read); never both in one cycle. RAM_RD_REG=0 (LUT RAM): the
    // fill loads top_e from the word read in the same cycle. RAM_RD_REG=1 (block RAM): the
    // fill's read happens at the popping edge and the TOS is the RAM's read register from
    // then on (top_in_q), until the next change of the TOS copies it into top_e. No
    // prefetch and no bypass: a word is always read back at a later edge than it was
    // written.

    // ---- constants ---------------------------------------------------------------------
    localparam integer DEPTH_W = $clog2(DEPTH + 1);  // width of sp (the depth output)
    localparam [DEPTH_W-1:0] SP_FULL = DEPTH[DEPTH_W-1:0];
    // An entry is {rpc, R slot, L slot} (ENTRY_W bits), a slot {mask, pc, valid} (SLOT_W
    // bits, valid at bit 0): the layout of dbg_stack.
    localparam integer S_PC   = 1;                // lsb of a slot's pc
    localparam integer S_MASK = 1 + PC_W;         // lsb of a slot's mask
    localparam integer E_R    = SLOT_W;           // lsb of the R slot
    localparam integer E_RPC  = 2 * SLOT_W;       // lsb of rpc

    // ---- state -------------------------------------------------------------------------
    // The entry storage (top_e, the RAM) has no reset: entries at and above sp are never
    // read (the TOS outputs read 0 when the stack is empty), and every entry is written
    // whole when it is pushed or launched.
    reg [ENTRY_W-1:0]   top_e;           // the TOS entry (the model's `top`)
    wire                top_in_q;        // the TOS is the RAM's read data (RD_REG=1)
    reg [DEPTH_W-1:0]   sp;              // number of entries; the TOS is entry sp-1
    reg [WARP_SIZE-1:0] done;            // threads that have exited (A12 v2)
    reg                 err_overflow_q;  // sticky
    reg                 err_pc_q;        // sticky
    reg                 err_side_q;      // sticky
    wire [ENTRY_W-1:0]  ram_rd_data;     // the entry read

    // ---- the top of stack (meaningless while the stack is empty) ------------------------
    wire                 empty       = (sp == {DEPTH_W{1'b0}});
    wire [DEPTH_W-1:0]   sp_m1       = sp - 1'b1;  // the TOS index
    wire [ENTRY_W-1:0]   view        = top_in_q ? ram_rd_data : top_e;  // the model's top()
    wire [SLOT_W-1:0]    view_l      = view[0 +: SLOT_W];
    wire [SLOT_W-1:0]    view_r      = view[E_R +: SLOT_W];
    wire                 top_l_valid = view_l[0];
    wire [PC_W-1:0]      top_l_pc    = view_l[S_PC +: PC_W];
    wire [WARP_SIZE-1:0] top_l_mask  = view_l[S_MASK +: WARP_SIZE];
    wire                 top_r_valid = view_r[0];
    wire [PC_W-1:0]      top_r_pc    = view_r[S_PC +: PC_W];
    wire [WARP_SIZE-1:0] top_r_mask  = view_r[S_MASK +: WARP_SIZE];
    wire [PC_W-1:0]      top_rpc     = view[E_RPC +: PC_W];
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

    // The TOS after the slot writes: the parent a push spills, else the new TOS.
    wire [SLOT_W-1:0]  slot_new = {slot_new_mask, slot_new_pc, slot_new_valid};
    wire [SLOT_W-1:0]  child_l  = {child_l_mask, child_l_pc, child_l_valid};
    wire [SLOT_W-1:0]  child_r  = {child_r_mask, child_r_pc, child_r_valid};
    wire [ENTRY_W-1:0] parent   = {top_rpc,
                                   wr_r ? (div_inplace ? child_r : slot_new) : view_r,
                                   wr_l ? (div_inplace ? child_l : slot_new) : view_l};
    wire [ENTRY_W-1:0] child    = {upd_rpc, child_r, child_l};

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
            if (pop) begin
                sp <= sp_m1;
            end else if (push_ok) begin
                sp <= sp + 1'b1;
            end
            done           <= done | exiting;
            err_overflow_q <= err_overflow_q | overflow;
            err_pc_q       <= err_pc_q | do_err_pc;
            err_side_q     <= err_side_q | do_err_side;
        end
    end

    // ---- pop() and the push: the storage ports -----------------------------------------
    wire pop  = upd_pop || auto_pop;
    // A pop from sp >= 2 fills the TOS from the entry below.
    wire fill = pop && (sp_m1 != {DEPTH_W{1'b0}});
    // The TOS register takes a new value (the model's set_top()).
    wire top_we = wr_l || wr_r || (fill && (RAM_RD_REG == 0));
    wire [ENTRY_W-1:0] top_n = push_ok ? child : (fill ? ram_rd_data : parent);

    wf_ram_dp #(
        .WIDTH  (ENTRY_W),
        .WORDS  (RAM_WORDS),
        .ADDR_W (RAM_ADDR_W),
        .RD_REG (RAM_RD_REG)
    ) u_ram (
        .clk     (clk),
        .wr_en   (push_ok),
        .wr_addr (sp_m1[RAM_ADDR_W-1:0]),
        .wr_data (parent),
        .rd_en   (fill),
        .rd_addr (sp_m1[RAM_ADDR_W-1:0] - 1'b1),
        .rd_data (ram_rd_data)
    );

    // ---- tick(): the TOS register ------------------------------------------------------
    always @(posedge clk) begin
        if (do_launch) begin
            top_e <= {launch_rpc, {SLOT_W{1'b0}}, launch_mask, launch_pc, 1'b1};
        end else if (top_we) begin
            top_e <= top_n;
        end
    end

    generate
        if (RAM_RD_REG != 0) begin : g_top_in_q
            // The TOS is the RAM's read data from a fill until the TOS next changes.
            reg top_in_q_q;
            always @(posedge clk) begin
                if (!rst_n) begin
                    top_in_q_q <= 1'b0;
                end else if (launch_valid || top_we) begin
                    top_in_q_q <= 1'b0;
                end else if (fill) begin
                    top_in_q_q <= 1'b1;
                end
            end
            assign top_in_q = top_in_q_q;
        end else begin : g_no_top_in_q
            assign top_in_q = 1'b0;
        end
    endgenerate

`ifndef SYNTHESIS
    // ---- simulation-only checks of illegal use (the model asserts the same) ------------
    // The ports cannot cause these (an update of an empty stack is err_pc, a push that does
    // not fit err_overflow); the RAM checks its own ports (wf_ram_dp).
    always @(posedge clk) begin
        if (pop && empty) begin
            $display("%m: illegal use of the stack storage: pop of an empty stack");
            $stop;
        end
        if (push_ok && (sp == SP_FULL)) begin
            $display("%m: illegal use of the stack storage: push beyond DEPTH");
            $stop;
        end
    end
`endif

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
    assign ev_pop        = pop;
    assign ev_inplace    = div_inplace;
    assign ev_div        = upd_div;
    assign ev_slot_inval = upd_inval || (push_ok && !new_rc);
    assign ev_sb_copy    = push_ok || upd_pop || auto_pop || div_inplace;
    assign err_overflow  = err_overflow_q;
    assign err_pc        = err_pc_q;
    assign err_side      = err_side_q;
{% endblock %}
