{% extends "_module.v" %}
{%- block body %}
    // Cycle-exact twin of warpforge_model::units::simt_stack::SimtStackSpe: the names below
    // are the model's (top, top_in_q, ram, sp, done, err_overflow, err_pc; decide(), tick(),
    // pop(), diverge()).
    //
    // Decisions where the seed is silent (spec §8): A1 END_PC bottom entry, A2 taken group
    // pushed first, fall-through on top; A4 reuse rule; A11 a push that does not fit sets
    // the sticky err_overflow and leaves the stack unchanged; A12 v2 `done` mask of exited
    // threads ANDed into every mask read, an empty effective TOS pops itself on an idle
    // cycle. A launch clears the stack, the done mask and the error flags.
    //
    // Storage (design.md §5): entries by pairs, pair k = entries 2k (slot 0) and 2k+1 (slot
    // 1). The top pair P = (sp-1)/2 is in the registers top0/top1; pairs 0..P-1 are in the
    // RAM u_ram (wf_ram_dp, one write and one read port, RAM_WORDS pair words). A divergence
    // whose entries leave the top pair spills it to word P (one write); a pop from an odd
    // sp >= 3 fills the pair below from word P-1 (one read); never both in one cycle.
    // RAM_RD_REG=0 (LUT RAM): the fill loads top0/top1 from the word read in the same
    // cycle. RAM_RD_REG=1 (block RAM): the fill's read happens at the popping edge and the
    // top pair is the RAM's read register from then on (top_in_q), until the next change
    // of the top pair copies it into top0/top1. No prefetch and no bypass are needed: a
    // word is always read back at a later edge than it was written.

    // ---- constants ---------------------------------------------------------------------
    localparam integer DEPTH_W = $clog2(DEPTH + 1);  // width of sp (the depth output)
    localparam integer PAIR_W  = DEPTH_W - 1;        // width of a pair index
    localparam [DEPTH_W-1:0] SP_FULL = DEPTH[DEPTH_W-1:0];
    // One entry {pc, rpc, mask} (ENTRY_W bits, mask at bit 0), the layout of dbg_stack.
    localparam integer E_RPC = WARP_SIZE;         // lsb of rpc
    localparam integer E_PC  = WARP_SIZE + PC_W;  // lsb of pc

    // ---- state -------------------------------------------------------------------------
    // The entry storage (top0, top1, the RAM) has no reset: entries at and above sp are
    // never read (tos_* read 0 when the stack is empty), so only sp, done, the flags and
    // top_in_q are reset.
    reg [ENTRY_W-1:0]     top0;            // the top pair, slot 0 (entry 2P)
    reg [ENTRY_W-1:0]     top1;            // the top pair, slot 1 (entry 2P+1)
    wire                  top_in_q;        // the top pair is the RAM's read data (RD_REG=1)
    reg [DEPTH_W-1:0]     sp;              // number of entries; the TOS is entry sp-1
    reg [WARP_SIZE-1:0]   done;            // threads that have exited (A12 v2)
    reg                   err_overflow_q;  // sticky
    reg                   err_pc_q;        // sticky
    wire [2*ENTRY_W-1:0]  ram_rd_data;     // {slot 1, slot 0} of the word read

    // ---- the top of stack (meaningless while the stack is empty) ------------------------
    wire                  empty    = (sp == {DEPTH_W{1'b0}});
    wire [DEPTH_W-1:0]    sp_m1    = sp - 1'b1;
    wire                  tos_slot = sp_m1[0];             // the TOS is slot (sp-1) % 2
    wire [PAIR_W-1:0]     pair     = sp_m1[DEPTH_W-1:1];   // P, the top pair's index
    // The top pair as the model's top_pair() reads it.
    wire [ENTRY_W-1:0]    view0    = top_in_q ? ram_rd_data[0 +: ENTRY_W] : top0;
    wire [ENTRY_W-1:0]    view1    = top_in_q ? ram_rd_data[ENTRY_W +: ENTRY_W] : top1;
    wire [ENTRY_W-1:0]    tos      = tos_slot ? view1 : view0;
    wire [PC_W-1:0]       top_pc   = tos[E_PC +: PC_W];
    wire [PC_W-1:0]       top_rpc  = tos[E_RPC +: PC_W];
    wire [WARP_SIZE-1:0]  top_mask = tos[0 +: WARP_SIZE];
    // The effective TOS mask: the entry's mask without exited threads (tos_mask()).
    wire [WARP_SIZE-1:0]  live     = empty ? {WARP_SIZE{1'b0}} : (top_mask & ~done);

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
    wire [ENTRY_W-1:0]   div_tos_e    = {div_tos_pc, top_rpc, div_tos_mask};
    wire [ENTRY_W-1:0]   push0_e      = {push0_pc, upd_rpc, push0_mask};
    wire [ENTRY_W-1:0]   push1_e      = {upd_next, upd_rpc, nt_mask};
    wire [ENTRY_W-1:0]   cont_e       = {g_pc, top_rpc, g_mask};

    // Threads retired by an EXIT (an accepted EXIT always pops or continues).
    wire [WARP_SIZE-1:0] exiting = (upd_ok && upd_kind == KIND_EXIT) ? tk_mask
                                                                       : {WARP_SIZE{1'b0}};

    // ---- pop() and diverge(): the storage ports ----------------------------------------
    wire pop   = upd_pop || auto_pop;
    // A pop from an odd sp >= 3 (slot 0 holds the TOS, a pair below exists) fills.
    wire fill  = pop && !tos_slot && (pair != {PAIR_W{1'b0}});
    // A divergence spills the top pair when its entries pass the pair's end: two pushes,
    // or one from an even sp (slot 1 holds the TOS).
    wire spill = div_ok && ((n_push == 2'd2) || (tos_slot && (n_push == 2'd1)));

    // The next top pair (the model's set_top()) and the spilled word {slot 1, slot 0}.
    reg [ENTRY_W-1:0]   top0_n;
    reg [ENTRY_W-1:0]   top1_n;
    reg [2*ENTRY_W-1:0] spill_data;
    always @* begin
        top0_n     = view0;
        top1_n     = view1;
        spill_data = {view1, view0};
        if (upd_cont) begin
            if (tos_slot) begin
                top1_n = cont_e;
            end else begin
                top0_n = cont_e;
            end
        end else if (div_ok) begin
            if (!tos_slot) begin
                // TOS in slot 0: the first push completes the pair, the second starts one
                top0_n = div_tos_e;
                top1_n = push0_e;
                if (n_push == 2'd2) begin
                    spill_data = {push0_e, div_tos_e};
                    top0_n     = push1_e;
                end
            end else begin
                // TOS in slot 1: any push starts the next pair
                top1_n = div_tos_e;
                if (n_push != 2'd0) begin
                    spill_data = {div_tos_e, view0};
                    top0_n     = push0_e;
                    top1_n     = push1_e;
                end
            end
        end else if (fill) begin
            // (RAM_RD_REG=0 only: with a registered read the pair stays in the RAM's
            // read register, top_in_q)
            top0_n = ram_rd_data[0 +: ENTRY_W];
            top1_n = ram_rd_data[ENTRY_W +: ENTRY_W];
        end
    end
    wire top_we = upd_cont || div_ok || (fill && (RAM_RD_REG == 0));
    // The RAM words: P (a spill's) and P-1 (a fill's); P <= RAM_WORDS fits RAM_ADDR_W bits.
    wire [RAM_ADDR_W-1:0] wr_word = sp_m1[RAM_ADDR_W:1];
    wire [RAM_ADDR_W-1:0] rd_word = wr_word - 1'b1;

    wf_ram_dp #(
        .WIDTH  (2 * ENTRY_W),
        .WORDS  (RAM_WORDS),
        .ADDR_W (RAM_ADDR_W),
        .RD_REG (RAM_RD_REG)
    ) u_ram (
        .clk     (clk),
        .wr_en   (spill),
        .wr_addr (wr_word),
        .wr_data (spill_data),
        .rd_en   (fill),
        .rd_addr (rd_word),
        .rd_data (ram_rd_data)
    );

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
            if (pop) begin
                sp <= sp_m1;
            end else if (div_ok) begin
                sp <= sp_div[DEPTH_W-1:0];
            end
            done           <= done | exiting;
            err_overflow_q <= err_overflow_q | overflow;
            err_pc_q       <= err_pc_q | do_err_pc;
        end
    end

    // ---- tick(): the top pair registers ------------------------------------------------
    always @(posedge clk) begin
        if (do_launch) begin
            top0 <= {launch_pc, launch_rpc, launch_mask};
        end else if (top_we) begin
            top0 <= top0_n;
            top1 <= top1_n;
        end
    end

    generate
        if (RAM_RD_REG != 0) begin : g_top_in_q
            // The top pair is the RAM's read data from a fill until the pair next changes.
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
        if (div_ok && (sp_div > {1'b0, SP_FULL})) begin
            $display("%m: illegal use of the stack storage: push beyond DEPTH");
            $stop;
        end
    end
`endif

    // ---- outputs -----------------------------------------------------------------------
    assign tos_valid    = |live;
    assign tos_pc       = empty ? {PC_W{1'b0}} : top_pc;
    assign tos_rpc      = empty ? {PC_W{1'b0}} : top_rpc;
    assign tos_mask     = live;
    assign depth        = sp;
    assign ev_push2     = div_ok && (n_push == 2'd2);
    assign ev_push1     = div_ok && (n_push == 2'd1);
    assign ev_pop       = pop;
    assign ev_div       = upd_div;
    assign err_overflow = err_overflow_q;
    assign err_pc       = err_pc_q;
{% endblock %}
