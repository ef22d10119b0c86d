{% extends "_cosim.v" %}
{%- block body %}
    // Debug state, as warpforge_model::units::capri_capt::CapriCapt::debug_state packs it:
    // entry i's valid bit, tag (0 when invalid), history (0 when invalid) and LRU rank at
    // field i of dbg_valid, dbg_tag, dbg_hist and dbg_lru, read from the unit's valid_q,
    // tags, hists and ranks. An invalid entry's tag and history are don't-care (never
    // reset, never read), so both sides show 0. Latched on the rising edge of wf_sample.
    localparam integer IW = $clog2(ENTRIES);
    reg [ENTRIES-1:0]     dbg_valid_q;
    reg [ENTRIES*PCW-1:0] dbg_tag_q;
    reg [ENTRIES*2-1:0]   dbg_hist_q;
    reg [ENTRIES*IW-1:0]  dbg_lru_q;
    integer i;
    always @(posedge wf_sample) begin
        dbg_valid_q <= u_unit.valid_q;
        for (i = 0; i < ENTRIES; i = i + 1) begin
            dbg_tag_q[i*PCW +: PCW] <= u_unit.valid_q[i] ? u_unit.tags[i] : {PCW{1'b0}};
            dbg_hist_q[i*2 +: 2]    <= u_unit.valid_q[i] ? u_unit.hists[i] : 2'b00;
            dbg_lru_q[i*IW +: IW]   <= u_unit.ranks[i];
        end
    end
    assign dbg_valid = dbg_valid_q;
    assign dbg_tag   = dbg_tag_q;
    assign dbg_hist  = dbg_hist_q;
    assign dbg_lru   = dbg_lru_q;
{% endblock %}
