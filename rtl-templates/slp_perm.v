{% extends "_module.v" %}
{%- block body %}
    // Cycle-exact twin of warpforge_model::units::slp_perm (xor_mask(), lane(),
    // lane_inverse(), permute_mask(), unpermute_mask()): combinational, no state.
    //
    // Every mode but Rotate_odd_1 XORs the logical position with a mask xm = M(wid) of
    // m = wid mod S (the low LW bits of wid, zero-extended when WIDW < LW):
    //   1 Balanced      {m[0], m[LW-1:1] ^ {(LW-1){m[0]}}} (even m: m/2, odd: its complement;
    //                   the closed form of the seed's mask table, LW-1 XOR gates)
    //   2 Odd_Even      odd m: 1          3 XOR-odd-half  odd m: S/2
    //   4 Rev_WID       m bit-reversed    5 FLIP_odd      odd m: S-1
    //   7 WID           m                 0 ident, 6 Rotate_odd_1: 0
    // Rotate_odd_1 moves odd warps' positions up one lane (inverse: down one). The XOR maps
    // are involutions, so `inverse` changes only mode 6. en = 0 is the identity (mode 0).
    // vec_out permutes a whole warp mask like lane_out: log2(S) butterfly stages, stage k
    // exchanging the lanes 2^k apart when xm[k] is set, or the rotation. Like every
    // combinational output of the platform, the outputs read 0 while rst_n is low.

    // ---- constants ---------------------------------------------------------------------
    localparam integer  LW   = $clog2(S);
    localparam [LW-1:0] ZERO = {LW{1'b0}};
    localparam [LW-1:0] ONE  = { {(LW - 1){1'b0}}, 1'b1 };
    localparam [LW-1:0] HALF = {1'b1, {(LW - 1){1'b0}}};
    localparam [LW-1:0] ALL1 = {LW{1'b1}};

    // ---- M(wid) ------------------------------------------------------------------------
    wire [WIDW+LW-1:0] wid_x  = { {LW{1'b0}}, wid };
    wire [LW-1:0]      m      = wid_x[LW-1:0];  // wid mod S
    wire               odd    = m[0];
    wire [2:0]         mode_e = en ? mode : 3'd0;
    wire [LW-1:0]      rev;                     // m bit-reversed
    genvar b;
    generate
        for (b = 0; b < LW; b = b + 1) begin : g_rev
            assign rev[b] = m[LW-1-b];
        end
    endgenerate
    reg [LW-1:0] xm;
    always @* begin
        case (mode_e)
            3'd1:    xm = {odd, m[LW-1:1] ^ {(LW - 1){odd}}};
            3'd2:    xm = odd ? ONE : ZERO;
            3'd3:    xm = odd ? HALF : ZERO;
            3'd4:    xm = rev;
            3'd5:    xm = odd ? ALL1 : ZERO;
            3'd7:    xm = m;
            default: xm = ZERO;  // 0 ident, 6 Rotate_odd_1
        endcase
    end
    wire rot = (mode_e == 3'd6) && odd;

    // ---- one lane ----------------------------------------------------------------------
    wire [LW-1:0] lane_rot = inverse ? lane_in - 1'b1 : lane_in + 1'b1;
    wire [LW-1:0] lane_p   = rot ? lane_rot : (lane_in ^ xm);

    // ---- a whole warp mask: butterfly stages over xm, or the rotation -----------------
    reg [S-1:0] vec_x;   // after the stages so far
    reg [S-1:0] vec_st;  // before this stage
    integer k;
    integer q;
    always @* begin
        vec_x  = vec_in;
        vec_st = vec_in;
        for (k = 0; k < LW; k = k + 1) begin
            vec_st = vec_x;
            for (q = 0; q < S; q = q + 1) begin
                if (xm[k]) begin
                    vec_x[q] = vec_st[q ^ (1 << k)];  // the lane 2^k apart
                end
            end
        end
    end
    wire [S-1:0] vec_rot = inverse ? {vec_in[0], vec_in[S-1:1]} : {vec_in[S-2:0], vec_in[S-1]};
    wire [S-1:0] vec_p   = rot ? vec_rot : vec_x;

    // ---- outputs -----------------------------------------------------------------------
    assign lane_out = rst_n ? lane_p : ZERO;
    assign xor_mask = rst_n ? xm : ZERO;
    assign vec_out  = rst_n ? vec_p : {S{1'b0}};

    // No clock (no state); wid bits above log2(S) only select a warp beyond the mask
    // period (A18).
    wire unused_clk_wid_hi = &{1'b0, clk, wid_x[WIDW+LW-1:LW]};
{% endblock %}
