{% extends "_module.v" %}
{%- block body %}
    // Cycle-exact twin of warpforge_model::units::wcu::Wcu (busy, lat, slots, seq; the
    // model's per-lane columns `cols` are the columns of `work` here).
    //
    // Masks at the ports are NW x S bit matrices, bit w*S + l = home warp w, lane l (spec
    // §7). At the start (req_valid && req_ready, cycle t) the working copy `work` is loaded
    // with req_mask & ~req_excl and the UMask slots with req_umask. From t + FIRST_LAT on,
    // each cycle offers compacted warp k (out_valid): per lane the lowest home warp left in
    // its column (one priority encoder per lane, A2); when it is accepted (out_ready) every
    // lane's selected thread is removed and the lowest UMask slot handed out (A3: warp k
    // goes to the k-th lowest slot that waited; out_slot = 0 once they run out, which
    // consistent inputs never do). A warp not accepted is held. `done` pulses with the
    // accepted last warp (no column holds a second thread), or at t + FIRST_LAT when the
    // working copy is empty (T13); req_ready rises the cycle after. out_* read 0 unless
    // out_valid; done_count 0 unless done.
    //
    // Storage: `work` is NW*S flip-flops, stored lane-major (bit l*NW + w: lane l's column
    // is NW adjacent bits); the start transposes the request into it, which in hardware is
    // wiring. Every cycle that emits a warp clears one bit in every lane at once (each
    // column's lowest set bit), so the whole array is read and written every cycle: a RAM
    // with one or two ports cannot do it, and the per-bit logic is one AND. The evaluator
    // (PRED_EN=1, §2.5) is one ones-count per lane of the request's column of req_mask
    // (req_excl ignored: bypassed warps included), a max over the lanes and the popcount of
    // req_contrib, registered at the start (valid at t+1); it keeps only the two counts,
    // pred_adequate = nw_after < nw_before.
    //
    // Why lane-major, and the encoders below as halving searches: a simulator evaluates a
    // column as one word instead of gathering NW scattered bits, and an encoder as WW zero
    // tests and shifts of that word instead of a tree of NW-1 selections of WW-bit indices
    // held in one wide vector. Verilated, the unit runs about four times as many cycles a
    // second as before (co-simulation speed in the README). The netlist is of the same
    // size: the encoder's WW levels select NP/2 + NP/4 + ... bits (NP-1 2:1 selections in
    // all, as the tree), with a zero test of the half at each.

    // ---- constants ---------------------------------------------------------------------
    localparam integer WW    = $clog2(NW);      // a warp index (NW >= 2)
    localparam integer CW    = $clog2(NW + 1);  // a warp count
    localparam integer NT    = NW * S;          // threads of the CTA mask
    localparam integer LAT_W = (FIRST_LAT > 1) ? $clog2(FIRST_LAT) : 1;
    localparam [LAT_W-1:0] LAT_INIT = FIRST_LAT[LAT_W-1:0] - 1'b1;  // FIRST_LAT - 1
    localparam integer NP    = 1 << WW;         // NW rounded up to a power of two
    localparam [0:0]       NO_EV    = 1'b0;  // the pred_* outputs with PRED_EN=0

    // ---- state -------------------------------------------------------------------------
    reg             busy;   // a request in progress (!req_ready)
    reg [LAT_W-1:0] lat;    // cycles left before warp 0
    reg [NT-1:0]    work;   // threads not emitted yet, bit l*NW + w (lane-major)
    reg [NW-1:0]    slots;  // UMask slots not handed out yet
    reg [CW-1:0]    seq;    // k of the offered warp

    // ---- priority encoders ---------------------------------------------------------------
    // The index of the lowest set bit of v (0 when none is set), found by halving: v is
    // padded with zeros to NP = 2^WW bits; at each of the WW levels, when the lower half
    // of what is left holds no set bit, that index bit is 1 and the upper half goes on.
    // Each level is a zero test and a 2:1 selection of half the width before it.
    function automatic [WW-1:0] lowest;
        input [NW-1:0] v;
        reg [NP-1:0] t;
        integer b;
        begin
            t = {NP{1'b0}};
            t[NW-1:0] = v;
            // b is the loop variable itself, so that a simulator unrolling the loop sees
            // every index and shift as a constant.
            for (b = WW - 1; b >= 0; b = b - 1) begin
                lowest[b] = (t & ({NP{1'b1}} >> (NP - (1 << b)))) == {NP{1'b0}};
                if (lowest[b]) begin
                    t = t >> (1 << b);
                end
            end
            if (v == {NW{1'b0}}) begin
                lowest = {WW{1'b0}};
            end
        end
    endfunction

    // The lane-major copy (bit l*NW + w) of a port mask (bit w*S + l): wiring.
    function automatic [NT-1:0] lane_major;
        input [NT-1:0] m;
        integer l;
        integer w;
        begin
            for (l = 0; l < S; l = l + 1) begin
                for (w = 0; w < NW; w = w + 1) begin
                    lane_major[l*NW + w] = m[w*S + l];
                end
            end
        end
    endfunction

    // The counts of the evaluator are trees over the NW rows padded with zeros to NP =
    // 2^WW leaves, reduced in place level by level: leaf i at position i, and at each level
    // node k = f(node 2k, node 2k+1). A linear chain (32 nested adds per lane, then a
    // 32-lane max) was 195 logic levels from req_mask to pred_nw_after in OSU 0.18 um
    // (40 MHz); the trees are log2 NW levels of adders.

    // The ones-count of ev_v (NW bits), an adder tree (the evaluator's; PRED_EN=1).
    function automatic [CW-1:0] ev_popcount;
        input [NW-1:0] ev_v;
        reg [NP*CW-1:0] ev_t;
        integer ev_i;
        integer ev_h;
        begin
            ev_t = {(NP*CW){1'b0}};
            for (ev_i = 0; ev_i < NW; ev_i = ev_i + 1) begin
                ev_t[ev_i*CW +: CW] = { {(CW - 1){1'b0}}, ev_v[ev_i] };
            end
            for (ev_h = NP / 2; ev_h >= 1; ev_h = ev_h / 2) begin
                for (ev_i = 0; ev_i < ev_h; ev_i = ev_i + 1) begin
                    ev_t[ev_i*CW +: CW] = ev_t[2*ev_i*CW +: CW] + ev_t[(2*ev_i + 1)*CW +: CW];
                end
            end
            ev_popcount = ev_t[CW-1:0];
        end
    endfunction

    // ---- one priority encoder per lane -------------------------------------------------
    wire [S-1:0]    lane_any;   // the column holds a thread
    wire [S-1:0]    lane_more;  // ... and a second one
    wire [S*WW-1:0] src;        // its lowest home warp (0 for an empty column)
    wire [NT-1:0]   work_rest;  // `work` without each column's lowest thread
    genvar l;
    generate
        for (l = 0; l < S; l = l + 1) begin : g_lane
            wire [NW-1:0] col;
            wire [NW-1:0] rest;
            assign col   = work[l*NW +: NW];
            assign rest  = col & (col - 1'b1);  // the lowest set bit cleared
            assign work_rest[l*NW +: NW] = rest;
            assign lane_any[l]    = |col;
            assign lane_more[l]   = |rest;
            assign src[l*WW +: WW] = lowest(col);
        end
    endgenerate

    // the lowest UMask slot left (0 when none is left)
    wire [NW-1:0] slots_rest = slots & (slots - 1'b1);
    wire [WW-1:0] slot = lowest(slots);

    // ---- control ------------------------------------------------------------------------
    wire issuing = busy && (lat == {LAT_W{1'b0}});   // FIRST_LAT has passed
    wire valid   = issuing && (|lane_any);          // out_valid
    wire last    = !(|lane_more);                   // the offered warp is the last
    wire start   = req_valid && !busy;              // req_valid && req_ready
    wire take    = valid && out_ready;
    wire fin     = issuing && (!(|lane_any) || (out_ready && last));  // done

    always @(posedge clk) begin
        // lat and seq have no reset: both are loaded at every start and read only while
        // busy. work and slots are reset so that the state is defined (the debug view).
        if (!rst_n) begin
            busy  <= 1'b0;
            work  <= {NT{1'b0}};
            slots <= {NW{1'b0}};
        end else if (start) begin
            busy  <= 1'b1;
            lat   <= LAT_INIT;
            work  <= lane_major(req_mask & ~req_excl);
            slots <= req_umask;
            seq   <= {CW{1'b0}};
        end else if (busy) begin
            if (!issuing) begin
                lat <= lat - 1'b1;
            end
            if (take) begin
                work  <= work_rest;
                slots <= slots_rest;
                seq   <= seq + 1'b1;
            end
            if (fin) begin
                busy <= 1'b0;
            end
        end
    end

    // ---- outputs -----------------------------------------------------------------------
    assign req_ready  = !busy;
    assign out_valid  = valid;
    assign out_lanes  = valid ? lane_any : {S{1'b0}};
    assign out_src    = valid ? src : {(S*WW){1'b0}};
    assign out_seq    = valid ? seq[WW-1:0] : {WW{1'b0}};
    assign out_slot   = valid ? slot : {WW{1'b0}};
    assign out_last   = valid && last;
    assign done       = rst_n && fin;
    assign done_count = (rst_n && fin && (|lane_any)) ? (seq + 1'b1) : {CW{1'b0}};

    // ---- adequacy evaluator (PRED_EN=1) --------------------------------------------------
    // Its names start with ev_; NO_EV is used only when PRED_EN=0 removes it. Its counts
    // are functions of the request, called in the branch of the clocked block that loads
    // them at a start: the same gates as continuous assignments, but a simulator evaluates
    // them only in a start cycle (as continuous logic, Verilator evaluated the 32 lanes'
    // popcounts and the max tree in every cycle: over half of the unit's simulation time).
    localparam integer NPS = 1 << $clog2(S);  // S rounded up to a power of two

    // The largest ones-count over the lanes of ev_mask's columns (bit w*S + l = warp w,
    // lane l): one popcount tree per lane, then a tree of compare-selects over the lanes,
    // as the encoders.
    function automatic [CW-1:0] ev_column_max;
        input [NT-1:0] ev_mask;
        reg [NW-1:0]     ev_col;
        reg [NPS*CW-1:0] ev_m;
        integer ev_l;
        integer ev_w;
        integer ev_k;
        integer ev_h;
        begin
            ev_m = {(NPS*CW){1'b0}};
            for (ev_l = 0; ev_l < S; ev_l = ev_l + 1) begin
                for (ev_w = 0; ev_w < NW; ev_w = ev_w + 1) begin
                    ev_col[ev_w] = ev_mask[ev_w*S + ev_l];
                end
                ev_m[ev_l*CW +: CW] = ev_popcount(ev_col);
            end
            for (ev_h = NPS / 2; ev_h >= 1; ev_h = ev_h / 2) begin
                for (ev_k = 0; ev_k < ev_h; ev_k = ev_k + 1) begin
                    ev_m[ev_k*CW +: CW] =
                        (ev_m[(2*ev_k + 1)*CW +: CW] > ev_m[2*ev_k*CW +: CW])
                            ? ev_m[(2*ev_k + 1)*CW +: CW] : ev_m[2*ev_k*CW +: CW];
                end
            end
            ev_column_max = ev_m[CW-1:0];
        end
    endfunction

    generate
        if (PRED_EN != 0) begin : g_pred
            reg          ev_valid_q;
            reg [CW-1:0] ev_after_q;   // the largest column of req_mask (excl ignored)
            reg [CW-1:0] ev_before_q;  // popcount(req_contrib)
            always @(posedge clk) begin
                if (!rst_n) begin
                    ev_valid_q  <= 1'b0;
                    ev_after_q  <= {CW{1'b0}};
                    ev_before_q <= {CW{1'b0}};
                end else begin
                    ev_valid_q <= start && req_eval;
                    if (start) begin
                        ev_after_q  <= ev_column_max(req_mask);
                        ev_before_q <= ev_popcount(req_contrib);
                    end
                end
            end
            assign pred_valid     = ev_valid_q;
            assign pred_nw_after  = ev_after_q;
            assign pred_nw_before = ev_before_q;
            assign pred_adequate  = (ev_after_q < ev_before_q);
        end else begin : g_no_pred
            assign pred_valid     = NO_EV;
            assign pred_nw_after  = {CW{NO_EV}};
            assign pred_nw_before = {CW{NO_EV}};
            assign pred_adequate  = NO_EV;
            // PRED_EN=0 reads neither input (the UNUSED check skips "unused" names).
            wire unused_pred = &{NO_EV, req_contrib, req_eval};
        end
    endgenerate

`ifndef SYNTHESIS
    // ---- simulation-only checks of the invariants (spec §7.4; the model asserts them) ---
    // done_count = the largest column popcount of req_mask & ~req_excl: the lower bound of
    // the lane constraint, which the greedy encoders reach. A function, so that a simulator
    // counts only in a start cycle.
    function automatic [CW-1:0] chk_largest_column;
        input [NT-1:0] chk_m;
        reg [CW-1:0] chk_n;
        integer chk_l;
        integer chk_w;
        begin
            chk_largest_column = {CW{1'b0}};
            for (chk_l = 0; chk_l < S; chk_l = chk_l + 1) begin
                chk_n = {CW{1'b0}};
                for (chk_w = 0; chk_w < NW; chk_w = chk_w + 1) begin
                    chk_n = chk_n + { {(CW - 1){1'b0}}, chk_m[chk_w*S + chk_l] };
                end
                if (chk_n > chk_largest_column) begin
                    chk_largest_column = chk_n;
                end
            end
        end
    endfunction
    reg [CW-1:0] chk_want;
    always @(posedge clk) begin
        if (rst_n && start) begin
            chk_want <= chk_largest_column(req_mask & ~req_excl);
        end
        if (done && (done_count != chk_want)) begin
            $display("%m: invariant violated: done_count %0d, the largest column has %0d",
                     done_count, chk_want);
            $stop;
        end
    end
`endif
{% endblock %}
