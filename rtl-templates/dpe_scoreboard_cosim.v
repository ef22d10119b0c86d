{% extends "_cosim.v" %}
{%- block body %}
    // Debug state, as warpforge_model::units::dpe_scoreboard::DpeScoreboard::debug_state
    // packs it: dbg_P and dbg_S hold row w*2+s (warp w, side s) at bits
    // [row*NUM_REGS +: NUM_REGS], read from the unit's row vectors p_rows and s_rows.
    genvar row;
    generate
        for (row = 0; row < 2 * NUM_WARPS; row = row + 1) begin : g_dbg
            assign dbg_P[row*NUM_REGS +: NUM_REGS] = u_unit.p_rows[row];
            assign dbg_S[row*NUM_REGS +: NUM_REGS] = u_unit.s_rows[row];
        end
    endgenerate
{% endblock %}
