{% extends "_cosim.v" %}
{%- block body %}
    // Debug state, as warpforge_model::units::wcu::Wcu::debug_state packs it: dbg_work is
    // the working copy (bit w*S + l: home warp w, lane l, not emitted yet; the unit stores
    // it lane-major, bit l*NW + w, so it is transposed here), dbg_slots the UMask slots not
    // handed out yet. Latched on the rising edge of wf_sample only.
    function automatic [NW*S-1:0] warp_major;
        input [NW*S-1:0] m;
        integer l;
        integer w;
        begin
            for (l = 0; l < S; l = l + 1) begin
                for (w = 0; w < NW; w = w + 1) begin
                    warp_major[w*S + l] = m[l*NW + w];
                end
            end
        end
    endfunction
    reg [NW*S-1:0] dbg_work_q;
    reg [NW-1:0]   dbg_slots_q;
    always @(posedge wf_sample) begin
        dbg_work_q  <= warp_major(u_unit.work);
        dbg_slots_q <= u_unit.slots;
    end
    assign dbg_work  = dbg_work_q;
    assign dbg_slots = dbg_slots_q;
{% endblock %}
