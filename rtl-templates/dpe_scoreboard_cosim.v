{% extends "_cosim.v" %}
{%- block body %}
    // Debug state, as warpforge_model::units::dpe_scoreboard::DpeScoreboard::debug_state
    // packs it: dbg_P and dbg_S hold row w*2+s (warp w, side s) at bits
    // [row*NUM_REGS +: NUM_REGS], read from the unit's row vectors p_rows and s_rows.
    // Latched on the rising edge of wf_sample only (the harness raises it every N cycles
    // and around a divergence), so no logic of this wrapper runs in the cycles between.
    // One block per row, so every slice has a constant offset: Verilator copies words
    // instead of inserting each row at a run-time bit offset (a loop's variable index),
    // which cost 30,000 host instructions per sample at the default 96 rows x 64 bits.
    reg [2*NUM_WARPS*NUM_REGS-1:0] dbg_P_q;
    reg [2*NUM_WARPS*NUM_REGS-1:0] dbg_S_q;
    genvar row;
    generate
        for (row = 0; row < 2 * NUM_WARPS; row = row + 1) begin : g_dbg_row
            always @(posedge wf_sample) begin
                dbg_P_q[row*NUM_REGS +: NUM_REGS] <= u_unit.p_rows[row];
                dbg_S_q[row*NUM_REGS +: NUM_REGS] <= u_unit.s_rows[row];
            end
        end
    endgenerate
    assign dbg_P = dbg_P_q;
    assign dbg_S = dbg_S_q;
{% endblock %}
