{% extends "_cosim.v" %}
{%- block body %}
    // ---- constants computed by the model (as in the unit) ----
    {{ m.localparam("ENTRY_W") }}
    {{ m.localparam("RAM_WORDS") }}
    // Debug state, as warpforge_model::units::simt_stack_dpe::SimtStackDpe::debug_state
    // packs it: dbg_stack holds entry i at bits [i*ENTRY_W +: ENTRY_W] as
    // {rpc, r_mask, r_pc, r_valid, l_mask, l_pc, l_valid}, entries at and above sp read 0.
    // Entry sp-1 (the TOS) is u_unit.view (the register or the RAM's read data); entry
    // i < sp-1 is RAM word i (u_unit.u_ram.mem). Latched on the rising edge of wf_sample
    // only (the harness raises it every N cycles and around a divergence), so no logic of
    // this wrapper runs in the cycles between.
    reg [DEPTH*ENTRY_W-1:0] dbg_stack_q;
    reg [WARP_SIZE-1:0]     dbg_done_q;
    genvar i;
    generate
        for (i = 0; i < DEPTH; i = i + 1) begin : g_dbg
            if (i < RAM_WORDS) begin : g_ram
                always @(posedge wf_sample) begin
                    if (u_unit.sp <= i) begin
                        dbg_stack_q[i*ENTRY_W +: ENTRY_W] <= {ENTRY_W{1'b0}};
                    end else if (u_unit.sp_m1 == i) begin
                        dbg_stack_q[i*ENTRY_W +: ENTRY_W] <= u_unit.view;
                    end else begin
                        dbg_stack_q[i*ENTRY_W +: ENTRY_W] <= u_unit.u_ram.mem[i];
                    end
                end
            end else begin : g_top
                always @(posedge wf_sample) begin
                    dbg_stack_q[i*ENTRY_W +: ENTRY_W] <=
                        (u_unit.sp > i) ? u_unit.view : {ENTRY_W{1'b0}};
                end
            end
        end
    endgenerate
    always @(posedge wf_sample) dbg_done_q <= u_unit.done;
    assign dbg_stack = dbg_stack_q;
    assign dbg_done  = dbg_done_q;
{% endblock %}
