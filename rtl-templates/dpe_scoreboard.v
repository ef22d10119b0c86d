{% extends "_module.v" %}
{%- block body %}
    // Cycle-exact twin of warpforge_model::units::dpe_scoreboard::DpeScoreboard: per
    // (warp w, side s) one row of NUM_REGS pending bits P[w][s] and shadow bits S[w][s]
    // (row w*2+s, the layout of dbg_P / dbg_S). Next state, exactly (spec A6, A7):
    //
    //     P' = (P & ~REL) | RSV
    //     S' = (S | (CPY[w] ? (P | RSV) : 0)) & ~REL
    //
    // where RSV / REL are the OR of this cycle's reserve / release ports naming the row and
    // CPY[w] = cpy_valid[w] copies a warp's pending bits into its shadow bits on both sides
    // (A5). q_hazard[i] = OR over the queried registers r of P[w][s][r] | S[w][!s][r]
    // ([L516]), read from the state of this cycle. DUAL=0 is the SPE scoreboard (A19):
    // every side input is ignored (side 0), copies are ignored, side 1 and S stay zero.
    // A warp index >= NUM_WARPS or register index >= NUM_REGS selects nothing.
    //
    // Storage decision (design.md §5, RAM primitives): the P and S rows stay in flops; no
    // banked RAM serves the ports at a reasonable cost. (1) Per cycle the unit reads, for
    // each of the Q query ports, the P row of (w, s) and the S row of (w, !s) of any warp,
    // and each of the NRSV reserve and NWB release ports read-modify-writes one row of any
    // warp: 2*Q + NRSV + NWB row reads and NRSV + NWB row writes (12 port accesses at the
    // default Q = NRSV = NWB = 2, 24 at the GPU's NRSV = NWB = 8) against two ports per
    // bank. Banking by warp helps only when the warps of one cycle fall in different banks,
    // which the SM does not guarantee (two schedulers issue and several writebacks retire
    // for any warps); a conflict would have to stall, which changes the timing the GPU
    // statistics depend on. (2) A copy (cpy_valid) updates the S rows of any number of warps
    // in one cycle, a flash operation over the array that no RAM has. (3) Replicating the
    // rows per read port (the LUT-RAM way to add read ports) multiplies the storage by
    // 2*Q + NRSV + NWB and still leaves one write port. The per-row logic is small
    // (P' = (P & ~REL) | RSV), so the state stays in NUM_WARPS*2*NUM_REGS*2 flops. The debug
    // ports dbg_P/dbg_S left this module: the co-simulation wrapper dpe_scoreboard_cosim
    // reads p_rows and s_rows.

    // ---- constants ---------------------------------------------------------------------
    localparam integer WARP_W = $clog2(NUM_WARPS);
    localparam integer REG_W  = $clog2(NUM_REGS);
    localparam integer ROWS   = 2 * NUM_WARPS;  // row w*2+s of NUM_REGS bits
    localparam integer SRCS   = 3;              // source registers per query
    localparam [NUM_REGS-1:0] REG_ONE   = { {(NUM_REGS - 1){1'b0}}, 1'b1 };
    localparam [NUM_REGS-1:0] REG_NONE  = {NUM_REGS{1'b0}};
    localparam [WARP_W:0]     WARPS     = NUM_WARPS[WARP_W:0];
    localparam [0:0]          DUAL_MODE = (DUAL != 0);

    // ---- reserve and release ports: the side each acts on and its register as a one-hot
    // Port k's side is bit k of rsv_sides (with DUAL=0 every port acts on side 0), its
    // register bit field k of rsv_bits (NUM_REGS bits, 0 when the port is not valid); its
    // warp is field k of rsv_warp.
    wire [NRSV-1:0]          rsv_sides = DUAL_MODE ? rsv_side : {NRSV{1'b0}};
    wire [NRSV*NUM_REGS-1:0] rsv_bits;
    wire [NWB-1:0]           rel_sides = DUAL_MODE ? rel_side : {NWB{1'b0}};
    wire [NWB*NUM_REGS-1:0]  rel_bits;
    genvar i;
    generate
        for (i = 0; i < NRSV; i = i + 1) begin : g_rsv
            assign rsv_bits[i*NUM_REGS +: NUM_REGS] =
                rsv_valid[i] ? (REG_ONE << rsv_reg[i*REG_W +: REG_W]) : REG_NONE;
        end
        for (i = 0; i < NWB; i = i + 1) begin : g_rel
            assign rel_bits[i*NUM_REGS +: NUM_REGS] =
                rel_valid[i] ? (REG_ONE << rel_reg[i*REG_W +: REG_W]) : REG_NONE;
        end
    endgenerate

    // ---- the row each valid port names, one-hot over the warps of each side ----------
    // Field 2k+s of rsv_hit / rel_hit (NUM_WARPS bits): bit w set when reserve / release
    // port k is valid and names row {w, s} (a warp that does not exist shifts out: no
    // bit). These decoders are shared by a row's enable and its RSV/REL below. One warp
    // decoder per side rather than one over all 2*NUM_WARPS rows: a decoder of the same size,
    // and a simulator shifts a word of at most 64 bits instead of a wide vector. (One packed
    // vector per kind, not an array: Icarus warns that an `always @*` reading an array is
    // sensitive to all of its words.)
    localparam [NUM_WARPS-1:0] WARP_ONE  = { {(NUM_WARPS - 1){1'b0}}, 1'b1 };
    localparam [NUM_WARPS-1:0] WARP_NONE = {NUM_WARPS{1'b0}};
    wire [NRSV*2*NUM_WARPS-1:0] rsv_hit;
    wire [NWB*2*NUM_WARPS-1:0]  rel_hit;
    genvar s;
    generate
        for (i = 0; i < NRSV; i = i + 1) begin : g_rsv_hit
            for (s = 0; s < 2; s = s + 1) begin : g_side
                localparam [0:0] SIDE = s;
                assign rsv_hit[(i*2 + s)*NUM_WARPS +: NUM_WARPS] =
                    (rsv_valid[i] && (rsv_sides[i] == SIDE))
                        ? (WARP_ONE << rsv_warp[i*WARP_W +: WARP_W]) : WARP_NONE;
            end
        end
        for (i = 0; i < NWB; i = i + 1) begin : g_rel_hit
            for (s = 0; s < 2; s = s + 1) begin : g_side
                localparam [0:0] SIDE = s;
                assign rel_hit[(i*2 + s)*NUM_WARPS +: NUM_WARPS] =
                    (rel_valid[i] && (rel_sides[i] == SIDE))
                        ? (WARP_ONE << rel_warp[i*WARP_W +: WARP_W]) : WARP_NONE;
            end
        end
    endgenerate
    // the rows some port names: bit s*NUM_WARPS + w for row {w, s}
    reg [2*NUM_WARPS-1:0] row_named;
    integer k;
    always @* begin
        row_named = {2{WARP_NONE}};
        for (k = 0; k < NRSV; k = k + 1) begin
            row_named = row_named | rsv_hit[k*2*NUM_WARPS +: 2*NUM_WARPS];
        end
        for (k = 0; k < NWB; k = k + 1) begin
            row_named = row_named | rel_hit[k*2*NUM_WARPS +: 2*NUM_WARPS];
        end
    end

    // ---- RSV and REL of row `row_sel`: the OR of the register bits of the ports naming it
    // (Called with a constant row. They read the module's port vectors rather than taking
    // them as arguments: Verilator zeroes a wide argument's copy at every call site, every
    // cycle.)
    function automatic [NUM_REGS-1:0] rsv_of(input integer row_sel);
        integer j;
        begin
            rsv_of = REG_NONE;
            for (j = 0; j < NRSV; j = j + 1) begin
                if (rsv_hit[(j*2 + row_sel % 2)*NUM_WARPS + row_sel / 2]) begin
                    rsv_of = rsv_of | rsv_bits[j*NUM_REGS +: NUM_REGS];
                end
            end
        end
    endfunction
    function automatic [NUM_REGS-1:0] rel_of(input integer row_sel);
        integer j;
        begin
            rel_of = REG_NONE;
            for (j = 0; j < NWB; j = j + 1) begin
                if (rel_hit[(j*2 + row_sel % 2)*NUM_WARPS + row_sel / 2]) begin
                    rel_of = rel_of | rel_bits[j*NUM_REGS +: NUM_REGS];
                end
            end
        end
    endfunction

    // ---- state: one row per (warp, side), tick() per row ------------------------------
    // A row's flops load only when a port names the row or its warp copies (`load`):
    // otherwise RSV = REL = 0 and no copy, and the next value is the present one. On FPGAs
    // `load` is the flops' clock enable. (Simulation cost: Verilator skips the next-state
    // logic of the rows nothing acts on; without the enable it evaluated all 2*NUM_WARPS
    // rows every cycle. P and S of a row are one block, S first: it reads P before P's
    // non-blocking write, so Verilator needs no shadow copy of P.)
    wire [NUM_REGS-1:0] p_rows [0:ROWS-1];  // P[w][s] = p_rows[{w, s}]
    wire [NUM_REGS-1:0] s_rows [0:ROWS-1];  // S[w][s] = s_rows[{w, s}]
    genvar row;
    generate
        for (row = 0; row < ROWS; row = row + 1) begin : g_row
            localparam integer ROW = row;
            // With DUAL=0 nothing ever reaches side 1 or the shadow bits: they are constant
            // zero (no flops), as the model's stay zero.
            if (DUAL_MODE || row % 2 == 0) begin : g_p
                wire cpy  = DUAL_MODE && cpy_valid[row / 2];
                wire load = row_named[(row % 2)*NUM_WARPS + row / 2] || cpy;
                reg [NUM_REGS-1:0] pending_q;
                reg [NUM_REGS-1:0] shadow_q;  // constant zero with DUAL=0 (no flops)
                always @(posedge clk) begin
                    if (!rst_n) begin
                        shadow_q  <= REG_NONE;
                        pending_q <= REG_NONE;
                    end else if (load) begin
                        shadow_q  <= !DUAL_MODE ? REG_NONE
                            : (shadow_q | (cpy ? (pending_q | rsv_of(ROW)) : REG_NONE)) & ~rel_of(ROW);
                        pending_q <= (pending_q & ~rel_of(ROW)) | rsv_of(ROW);
                    end
                end
                assign p_rows[row] = pending_q;
                assign s_rows[row] = shadow_q;
            end else begin : g_no_p
                assign p_rows[row] = REG_NONE;
                assign s_rows[row] = REG_NONE;
                wire unused_row_named = row_named[NUM_WARPS + row / 2];  // no port names side 1 (DUAL=0)
            end
        end
    endgenerate

    generate
        if (!DUAL_MODE) begin : g_spe_mode
            // With DUAL=0 copies have no effect (A19); Verilator's UNUSED check skips names
            // containing "unused".
            wire unused_cpy_valid = &{1'b0, cpy_valid};
        end
    endgenerate

    // ---- hazard queries (combinational, from the state of this cycle) ------------------
    genvar q;
    generate
        for (q = 0; q < Q; q = q + 1) begin : g_query
            wire [WARP_W-1:0] warp = q_warp[q*WARP_W +: WARP_W];
            wire              side = DUAL_MODE && q_side[q];
            // the queried registers as a mask (an index >= NUM_REGS shifts out: no bit)
            wire [NUM_REGS-1:0] regs =
                  (q_src_valid[q*SRCS]     ? (REG_ONE << q_src[(q*SRCS)*REG_W +: REG_W])
                                           : REG_NONE)
                | (q_src_valid[q*SRCS + 1] ? (REG_ONE << q_src[(q*SRCS + 1)*REG_W +: REG_W])
                                           : REG_NONE)
                | (q_src_valid[q*SRCS + 2] ? (REG_ONE << q_src[(q*SRCS + 2)*REG_W +: REG_W])
                                           : REG_NONE)
                | (q_dst_valid[q]          ? (REG_ONE << q_dst[q*REG_W +: REG_W])
                                           : REG_NONE);
            wire [NUM_REGS-1:0] own   = p_rows[{warp, side}];
            wire [NUM_REGS-1:0] other = DUAL_MODE ? s_rows[{warp, !side}] : REG_NONE;
            wire                warp_ok = ({1'b0, warp} < WARPS);
            assign q_hazard[q] = rst_n && warp_ok && (|(regs & (own | other)));
        end
    endgenerate
{% endblock %}
