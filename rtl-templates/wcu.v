{% extends "_module.v" %}
{%- block body %}
    // Cycle-exact twin of warpforge_model::units::wcu::Wcu (busy, lat, slots, seq; the
    // model's per-lane columns `cols` are the columns of `work` here).
    //
    // Masks are NW x S bit matrices, bit w*S + l = home warp w, lane l (spec §7). At the
    // start (req_valid && req_ready, cycle t) the working copy `work` is loaded with
    // req_mask & ~req_excl and the UMask slots with req_umask. From t + FIRST_LAT on, each
    // cycle offers compacted warp k (out_valid): per lane the lowest home warp left in its
    // column (one priority encoder per lane, A2); when it is accepted (out_ready) every
    // lane's selected thread is removed and the lowest UMask slot handed out (A3: warp k
    // goes to the k-th lowest slot that waited; out_slot = 0 once they run out, which
    // consistent inputs never do). A warp not accepted is held. `done` pulses with the
    // accepted last warp (no column holds a second thread), or at t + FIRST_LAT when the
    // working copy is empty (T13); req_ready rises the cycle after. out_* read 0 unless
    // out_valid; done_count 0 unless done.
    //
    // Storage: `work` is NW*S flip-flops. Every cycle that emits a warp clears one bit in
    // every lane at once (each column's lowest set bit), so the whole array is read and
    // written every cycle: a RAM with one or two ports cannot do it, and the per-bit logic
    // is one AND. The evaluator (PRED_EN=1, §2.5) is one ones-count per lane of the
    // request's column of req_mask (req_excl ignored: bypassed warps included), a max over
    // the lanes and the popcount of req_contrib, registered at the start (valid at t+1);
    // it keeps only the two counts, pred_adequate = nw_after < nw_before.

    // ---- constants ---------------------------------------------------------------------
    localparam integer WW    = $clog2(NW);      // a warp index (NW >= 2)
    localparam integer CW    = $clog2(NW + 1);  // a warp count
    localparam integer NT    = NW * S;          // threads of the CTA mask
    localparam integer LAT_W = (FIRST_LAT > 1) ? $clog2(FIRST_LAT) : 1;
    localparam [LAT_W-1:0] LAT_INIT = FIRST_LAT[LAT_W-1:0] - 1'b1;  // FIRST_LAT - 1
    localparam [NW-1:0]    NW_ONE   = { {(NW - 1){1'b0}}, 1'b1 };
    localparam [0:0]       NO_EV    = 1'b0;  // the pred_* outputs with PRED_EN=0

    // ---- state -------------------------------------------------------------------------
    reg             busy;   // a request in progress (!req_ready)
    reg [LAT_W-1:0] lat;    // cycles left before warp 0
    reg [NT-1:0]    work;   // threads not emitted yet, bit w*S + l
    reg [NW-1:0]    slots;  // UMask slots not handed out yet
    reg [CW-1:0]    seq;    // k of the offered warp

    // ---- one priority encoder per lane -------------------------------------------------
    wire [S-1:0]    lane_any;   // the column holds a thread
    wire [S-1:0]    lane_more;  // ... and a second one
    wire [S*WW-1:0] src;        // its lowest home warp (0 for an empty column)
    wire [NT-1:0]   work_rest;  // `work` without each column's lowest thread
    genvar l;
    genvar w;
    generate
        for (l = 0; l < S; l = l + 1) begin : g_lane
            wire [NW-1:0] col;
            wire [NW-1:0] rest;
            reg  [WW-1:0] enc;
            integer i;
            for (w = 0; w < NW; w = w + 1) begin : g_col
                assign col[w] = work[w*S + l];
                assign work_rest[w*S + l] = rest[w];
            end
            always @* begin
                enc = {WW{1'b0}};
                for (i = NW - 1; i >= 0; i = i - 1) begin  // the lowest set bit wins
                    if (col[i]) begin
                        enc = i[WW-1:0];
                    end
                end
            end
            assign rest           = col & ~(NW_ONE << enc);
            assign lane_any[l]    = |col;
            assign lane_more[l]   = |rest;
            assign src[l*WW +: WW] = enc;
        end
    endgenerate

    // the lowest UMask slot left (0 when none is left)
    reg [WW-1:0] slot;
    integer j;
    always @* begin
        slot = {WW{1'b0}};
        for (j = NW - 1; j >= 0; j = j - 1) begin
            if (slots[j]) begin
                slot = j[WW-1:0];
            end
        end
    end

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
            work  <= req_mask & ~req_excl;
            slots <= req_umask;
            seq   <= {CW{1'b0}};
        end else if (busy) begin
            if (!issuing) begin
                lat <= lat - 1'b1;
            end
            if (take) begin
                work  <= work_rest;
                slots <= slots & (slots - 1'b1);
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
    // Its names start with ev_; NO_EV is used only when PRED_EN=0 removes it.
    generate
        if (PRED_EN != 0) begin : g_pred
            // per lane: the ones-count of the request's column (excl ignored)
            wire [S*CW-1:0] ev_cnt;
            for (l = 0; l < S; l = l + 1) begin : g_cnt
                reg [CW-1:0] ev_n;
                integer ev_i;
                always @* begin
                    ev_n = {CW{1'b0}};
                    for (ev_i = 0; ev_i < NW; ev_i = ev_i + 1) begin
                        ev_n = ev_n + { {(CW - 1){1'b0}}, req_mask[ev_i*S + l] };
                    end
                end
                assign ev_cnt[l*CW +: CW] = ev_n;
            end
            reg [CW-1:0] ev_after;   // max over the lanes
            reg [CW-1:0] ev_before;  // popcount(req_contrib)
            integer ev_k;
            always @* begin
                ev_after = {CW{1'b0}};
                for (ev_k = 0; ev_k < S; ev_k = ev_k + 1) begin
                    if (ev_cnt[ev_k*CW +: CW] > ev_after) begin
                        ev_after = ev_cnt[ev_k*CW +: CW];
                    end
                end
                ev_before = {CW{1'b0}};
                for (ev_k = 0; ev_k < NW; ev_k = ev_k + 1) begin
                    ev_before = ev_before + { {(CW - 1){1'b0}}, req_contrib[ev_k] };
                end
            end
            reg          ev_valid_q;
            reg [CW-1:0] ev_after_q;
            reg [CW-1:0] ev_before_q;
            always @(posedge clk) begin
                if (!rst_n) begin
                    ev_valid_q  <= 1'b0;
                    ev_after_q  <= {CW{1'b0}};
                    ev_before_q <= {CW{1'b0}};
                end else begin
                    ev_valid_q  <= start && req_eval;
                    ev_after_q  <= start ? ev_after : ev_after_q;
                    ev_before_q <= start ? ev_before : ev_before_q;
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
    // the lane constraint, which the greedy encoders reach.
    reg [CW-1:0] chk_want;
    reg [CW-1:0] chk_n;
    reg [CW-1:0] chk_max;
    integer chk_l;
    integer chk_w;
    always @* begin
        chk_max = {CW{1'b0}};
        for (chk_l = 0; chk_l < S; chk_l = chk_l + 1) begin
            chk_n = {CW{1'b0}};
            for (chk_w = 0; chk_w < NW; chk_w = chk_w + 1) begin
                chk_n = chk_n + { {(CW - 1){1'b0}},
                                  req_mask[chk_w*S + chk_l] & !req_excl[chk_w*S + chk_l] };
            end
            if (chk_n > chk_max) begin
                chk_max = chk_n;
            end
        end
    end
    always @(posedge clk) begin
        if (rst_n && start) begin
            chk_want <= chk_max;
        end
        if (done && (done_count != chk_want)) begin
            $display("%m: invariant violated: done_count %0d, the largest column has %0d",
                     done_count, chk_want);
            $stop;
        end
    end
`endif
{% endblock %}
