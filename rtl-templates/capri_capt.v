{% extends "_module.v" %}
{%- block body %}
    // Cycle-exact twin of warpforge_model::units::capri_capt::CapriCapt (the names are the
    // model's: valid, tag, hist, rank, victim(), touch(), find()).
    //
    // A fully associative table of ENTRIES entries {valid, tag = branch PC, history} with
    // true LRU. A diverged branch (br_valid && br_diverged) is looked up; a hit answers
    // from its history (stall when hist >= HIST_THR), a miss allocates the lowest invalid
    // entry, or the LRU one (rank LAST) when every entry is valid, with HIST_INIT and
    // stalls. A branch that did not diverge touches nothing (rsp_stall = 0). The response
    // is registered (LOOKUP_LAT = 1). History is one saturating counter per entry whose
    // limits (HIST_MAX, HIST_THR, HIST_INIT, HIST_UPD) the model computes from HIST and
    // CTR_INIT: 1b-Latest is the counter at a range of 0..1, 1b-Sticky never updates.
    //
    // Same-cycle rules (spec §7.2): the lookup reads the state before the edge; the update
    // is applied first and the allocation second (the allocation wins on its victim); a
    // hit and an allocation make the entry MRU (rank 0, the younger ranks age by one), an
    // update does not; flush clears every valid bit and writes nothing else (the update is
    // dropped, the lookup answered but not allocated).
    //
    // Storage (design.md §5): flip-flops, no wf_ram_dp. The tags and valid bits are a CAM
    // (the lookup and the update each compare with every tag in one cycle; flush clears
    // every valid bit); a touch rewrites every younger entry's rank; the history is read by
    // the lookup, read-modified-written by the update and written by the allocation in one
    // cycle (two reads, two writes against one write port). See the model file.

    // ---- constants ---------------------------------------------------------------------
    localparam integer  IW       = $clog2(ENTRIES);  // width of an entry index and a rank
    localparam integer  LAST_I   = ENTRIES - 1;
    localparam [IW-1:0] LAST     = LAST_I[IW-1:0];   // the rank of the LRU entry
    localparam [IW-1:0] IDX_NONE = {IW{1'b0}};
    localparam [0:0]    UPD      = (HIST_UPD != 0);

    // ---- state -------------------------------------------------------------------------
    // Tags and history have no reset: an entry's are written when it is allocated and
    // never read while it is invalid.
    reg  [ENTRIES-1:0] valid_q;
    wire [PCW-1:0]     tags  [0:ENTRIES-1];  // entry i's tag_q
    wire [1:0]         hists [0:ENTRIES-1];  // entry i's hist_q
    wire [IW-1:0]      ranks [0:ENTRIES-1];  // entry i's rank_q (0 = MRU)
    reg                rsp_valid_q;
    reg                rsp_stall_q;
    reg                rsp_hit_q;
    reg                rsp_alloc_q;
    reg                rsp_evict_q;
    reg  [IW-1:0]      rsp_idx_q;
    reg                upd_hit_q;

    // ---- this cycle: lookup, update, victim --------------------------------------------
    wire               lookup = br_valid && br_diverged;
    wire               write  = !flush;                   // flush writes only valid_q
    wire [ENTRIES-1:0] br_hits;     // valid and tagged br_pc (one-hot or zero)
    wire [ENTRIES-1:0] upd_hits;    // valid and tagged upd_pc (one-hot or zero)
    wire [ENTRIES-1:0] stall_hits;  // br_hits whose history predicts stall
    wire [ENTRIES-1:0] lru_oh;      // rank == LAST (one-hot: the ranks are a permutation)
    wire               hit        = |br_hits;
    wire               all_valid  = &valid_q;
    // victim(): the lowest invalid entry (the lowest 0 of valid_q), or the LRU one.
    wire [ENTRIES-1:0] free_oh    = ~valid_q & (valid_q + 1'b1);
    wire [ENTRIES-1:0] alloc_oh   = all_valid ? lru_oh : free_oh;
    wire               alloc_en   = lookup && write && !hit;
    wire               upd_en     = upd_valid && write;
    wire               touch_en   = lookup && write;
    wire [ENTRIES-1:0] touch_oh   = hit ? br_hits : alloc_oh;
    // One-hot to index and the touched entry's rank: each entry's term (its index or rank
    // when selected, else 0), ORed over the entries.
    wire [ENTRIES*IW-1:0] hit_terms;
    wire [ENTRIES*IW-1:0] alloc_terms;
    wire [ENTRIES*IW-1:0] rank_terms;
    reg  [IW-1:0]         hit_idx;
    reg  [IW-1:0]         alloc_idx;
    reg  [IW-1:0]         touch_rank;
    integer k;
    always @* begin
        hit_idx    = IDX_NONE;
        alloc_idx  = IDX_NONE;
        touch_rank = IDX_NONE;
        for (k = 0; k < ENTRIES; k = k + 1) begin
            hit_idx    = hit_idx | hit_terms[k*IW +: IW];
            alloc_idx  = alloc_idx | alloc_terms[k*IW +: IW];
            touch_rank = touch_rank | rank_terms[k*IW +: IW];
        end
    end

    // ---- the entries -------------------------------------------------------------------
    genvar i;
    generate
        for (i = 0; i < ENTRIES; i = i + 1) begin : g_ent
            localparam integer  I   = i;
            localparam [IW-1:0] IDX = I[IW-1:0];
            reg  [PCW-1:0] tag_q;
            reg  [1:0]     hist_q;
            reg  [IW-1:0]  rank_q;
            wire           alloc_we = alloc_en && alloc_oh[i];
            wire           upd_we   = UPD && upd_en && upd_hits[i];
            always @(posedge clk) begin
                if (alloc_we) begin
                    tag_q <= br_pc;
                end
            end
            // The update first, then the allocation: an allocation of this entry wins.
            always @(posedge clk) begin
                if (alloc_we) begin
                    hist_q <= HIST_INIT;
                end else if (upd_we) begin
                    if (upd_adequate) begin
                        hist_q <= (hist_q == HIST_MAX) ? hist_q : hist_q + 1'b1;
                    end else begin
                        hist_q <= (hist_q == 2'd0) ? hist_q : hist_q - 1'b1;
                    end
                end
            end
            // touch(): rank 0 for the touched entry, +1 for every younger one.
            always @(posedge clk) begin
                if (!rst_n) begin
                    rank_q <= IDX;
                end else if (touch_en) begin
                    if (touch_oh[i]) begin
                        rank_q <= IDX_NONE;
                    end else if (rank_q < touch_rank) begin
                        rank_q <= rank_q + 1'b1;
                    end
                end
            end
            assign tags[i]  = tag_q;
            assign hists[i] = hist_q;
            assign ranks[i] = rank_q;
            assign br_hits[i]    = valid_q[i] && (tags[i] == br_pc);
            assign upd_hits[i]   = valid_q[i] && (tags[i] == upd_pc);
            assign stall_hits[i] = br_hits[i] && (hists[i] >= HIST_THR);
            assign lru_oh[i]     = (ranks[i] == LAST);
            assign hit_terms[i*IW +: IW]   = br_hits[i] ? IDX : IDX_NONE;
            assign alloc_terms[i*IW +: IW] = alloc_oh[i] ? IDX : IDX_NONE;
            assign rank_terms[i*IW +: IW]  = touch_oh[i] ? ranks[i] : IDX_NONE;
        end
    endgenerate

    always @(posedge clk) begin
        if (!rst_n) begin
            valid_q <= {ENTRIES{1'b0}};
        end else if (flush) begin
            valid_q <= {ENTRIES{1'b0}};
        end else if (alloc_en) begin
            valid_q <= valid_q | alloc_oh;
        end
    end

    // ---- the response (LOOKUP_LAT = 1) -------------------------------------------------
    always @(posedge clk) begin
        if (!rst_n) begin
            rsp_valid_q <= 1'b0;
            rsp_stall_q <= 1'b0;
            rsp_hit_q   <= 1'b0;
            rsp_alloc_q <= 1'b0;
            rsp_evict_q <= 1'b0;
            rsp_idx_q   <= IDX_NONE;
            upd_hit_q   <= 1'b0;
        end else begin
            rsp_valid_q <= br_valid;
            rsp_stall_q <= lookup && (!hit || (|stall_hits));
            rsp_hit_q   <= lookup && hit;
            rsp_alloc_q <= alloc_en;
            rsp_evict_q <= alloc_en && all_valid;
            rsp_idx_q   <= (lookup && hit) ? hit_idx : (alloc_en ? alloc_idx : IDX_NONE);
            upd_hit_q   <= upd_en && (|upd_hits);
        end
    end

    // ---- outputs -----------------------------------------------------------------------
    assign rsp_valid = rsp_valid_q;
    assign rsp_stall = rsp_stall_q;
    assign rsp_hit   = rsp_hit_q;
    assign rsp_alloc = rsp_alloc_q;
    assign rsp_evict = rsp_evict_q;
    assign rsp_idx   = rsp_idx_q;
    assign upd_hit   = upd_hit_q;

`ifndef SYNTHESIS
    // ---- simulation-only checks of illegal state (the model asserts the same) ----------
    // The ports cannot cause these: an allocation happens only on a miss, and a touch
    // keeps the ranks a permutation. They catch bugs in the table logic.
    localparam [ENTRIES-1:0] NONE = {ENTRIES{1'b0}};
    // The history localparams above were computed for HIST and CTR_INIT: a simulator's
    // parameter override (-G) does not recompute them, so it is refused here.
    localparam [0:0] HIST_STALE = (HIST_UPD != ((HIST == 1) ? 0 : 1))
                                  || ((HIST == 2) && ({30'd0, HIST_INIT} != CTR_INIT));
    always @(posedge clk) begin
        if (HIST_STALE) begin
            $display("%m: HIST/CTR_INIT differ from the generated history constants: regenerate");
            $stop;
        end
        if (rst_n && lookup && ((br_hits & (br_hits - 1'b1)) != NONE)) begin
            $display("%m: illegal CAPT state: two valid entries hold the tag of br_pc");
            $stop;
        end
        if (rst_n && upd_en && ((upd_hits & (upd_hits - 1'b1)) != NONE)) begin
            $display("%m: illegal CAPT state: two valid entries hold the tag of upd_pc");
            $stop;
        end
        if (rst_n && alloc_en && all_valid
                && ((lru_oh == NONE) || ((lru_oh & (lru_oh - 1'b1)) != NONE))) begin
            $display("%m: illegal CAPT state: LRU ranks are not a permutation");
            $stop;
        end
    end
`endif
{% endblock %}
