{% extends "_cosim.v" %}
{%- block body %}
    // ---- constants computed by the model (as in the unit) ----
    {{ m.localparam("ENTRY_W") }}
    {{ m.localparam("RAM_WORDS") }}
    // Debug state, as warpforge_model::units::simt_stack_dpe::SimtStackDpe::debug_state
    // packs it: dbg_stack holds entry i at bits [i*ENTRY_W +: ENTRY_W] as
    // {rpc, r_mask, r_pc, r_valid, l_mask, l_pc, l_valid}, entries at and above sp read 0.
    // Entry sp-1 (the TOS) is u_unit.view (the register or the RAM's read data); entry
    // i < sp-1 is RAM word i (u_unit.u_ram.mem).
    genvar i;
    generate
        for (i = 0; i < DEPTH; i = i + 1) begin : g_dbg
            wire [ENTRY_W-1:0] entry;
            if (i < RAM_WORDS) begin : g_ram
                assign entry = (u_unit.sp_m1 == i) ? u_unit.view : u_unit.u_ram.mem[i];
            end else begin : g_top
                assign entry = u_unit.view;
            end
            assign dbg_stack[i*ENTRY_W +: ENTRY_W] = (u_unit.sp > i) ? entry : {ENTRY_W{1'b0}};
        end
    endgenerate
    assign dbg_done = u_unit.done;
{% endblock %}
