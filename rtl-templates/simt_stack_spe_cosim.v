{% extends "_cosim.v" %}
{%- block body %}
    // ---- constants computed by the model (as in the unit) ----
    {{ m.localparam("ENTRY_W") }}
    {{ m.localparam("RAM_WORDS") }}
    // Debug state, as warpforge_model::units::simt_stack::SimtStackSpe::debug_state packs it:
    // dbg_stack holds entry i at bits [i*ENTRY_W +: ENTRY_W] as {pc, rpc, mask}, entries at
    // and above sp read 0. Entry i is in pair i/2, slot i%2: in the top pair (u_unit.view0,
    // u_unit.view1: the registers or the RAM's read data) when i/2 is the top pair's index,
    // else in RAM word i/2 (u_unit.u_ram.mem).
    localparam integer DEPTH_W = $clog2(DEPTH + 1);
    localparam integer PAIR_W  = DEPTH_W - 1;

    genvar i;
    generate
        for (i = 0; i < DEPTH; i = i + 1) begin : g_dbg
            localparam integer      PAIR_I = i / 2;
            localparam [PAIR_W-1:0] PAIR   = PAIR_I[PAIR_W-1:0];
            wire [ENTRY_W-1:0] in_top = (i % 2 == 1) ? u_unit.view1 : u_unit.view0;
            wire [ENTRY_W-1:0] entry;
            if (i / 2 < RAM_WORDS) begin : g_ram
                assign entry = (u_unit.pair == PAIR) ? in_top
                                                     : u_unit.u_ram.mem[i / 2][(i % 2) * ENTRY_W +: ENTRY_W];
            end else begin : g_top
                assign entry = in_top;
            end
            assign dbg_stack[i*ENTRY_W +: ENTRY_W] = (u_unit.sp > i) ? entry : {ENTRY_W{1'b0}};
        end
    endgenerate
    assign dbg_done = u_unit.done;
{% endblock %}
