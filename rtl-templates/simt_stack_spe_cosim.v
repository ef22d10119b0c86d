{% extends "_cosim.v" %}
{%- block body %}
    // ---- constants computed by the model (as in the unit) ----
    {{ m.localparam("ENTRY_W") }}
    {{ m.localparam("RAM_WORDS") }}
    // Debug state, as warpforge_model::units::simt_stack::SimtStackSpe::debug_state packs it:
    // dbg_stack holds entry i at bits [i*ENTRY_W +: ENTRY_W] as {pc, rpc, mask}, entries at
    // and above sp read 0. Entry i is in pair i/2, slot i%2: in the top pair (u_unit.view0,
    // u_unit.view1: the registers or the RAM's read data) when i/2 is the top pair's index,
    // else in RAM word i/2 (u_unit.u_ram.mem). Latched on the rising edge of wf_sample only
    // (the harness raises it every N cycles and around a divergence), so no logic of this
    // wrapper runs in the cycles between.
    localparam integer DEPTH_W = $clog2(DEPTH + 1);
    localparam integer PAIR_W  = DEPTH_W - 1;

    reg [DEPTH*ENTRY_W-1:0] dbg_stack_q;
    reg [WARP_SIZE-1:0]     dbg_done_q;
    genvar i;
    generate
        for (i = 0; i < DEPTH; i = i + 1) begin : g_dbg
            localparam integer      PAIR_I = i / 2;
            localparam [PAIR_W-1:0] PAIR   = PAIR_I[PAIR_W-1:0];
            localparam [DEPTH_W-1:0] I     = i[DEPTH_W-1:0];
            if (i / 2 < RAM_WORDS) begin : g_ram
                always @(posedge wf_sample) begin
                    if (u_unit.sp <= I) begin
                        dbg_stack_q[i*ENTRY_W +: ENTRY_W] <= {ENTRY_W{1'b0}};
                    end else if (u_unit.pair == PAIR) begin
                        dbg_stack_q[i*ENTRY_W +: ENTRY_W] <=
                            (i % 2 == 1) ? u_unit.view1 : u_unit.view0;
                    end else begin
                        dbg_stack_q[i*ENTRY_W +: ENTRY_W] <=
                            u_unit.u_ram.mem[i / 2][(i % 2)*ENTRY_W +: ENTRY_W];
                    end
                end
            end else begin : g_top
                always @(posedge wf_sample) begin
                    if (u_unit.sp <= I) begin
                        dbg_stack_q[i*ENTRY_W +: ENTRY_W] <= {ENTRY_W{1'b0}};
                    end else begin
                        dbg_stack_q[i*ENTRY_W +: ENTRY_W] <=
                            (i % 2 == 1) ? u_unit.view1 : u_unit.view0;
                    end
                end
            end
        end
    endgenerate
    always @(posedge wf_sample) dbg_done_q <= u_unit.done;
    assign dbg_stack = dbg_stack_q;
    assign dbg_done  = dbg_done_q;
{% endblock %}
