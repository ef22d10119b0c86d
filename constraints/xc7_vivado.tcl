# Vivado out-of-context implementation of one warpforge unit on a 7-series part, with the
# rendered XDC: run `vivado -mode batch -source xc7_vivado.tcl` in the folder `warpforge
# synth --target xilinx` wrote (the unit's Verilog, its file list `@TOP@.f` and `@TOP@.xdc`
# are there). warpforge itself does not run Vivado (not packaged); Yosys' synth_xilinx gives
# its resource counts.
set part @PART@
set top @TOP@
set fh [open "${top}.f" r]
foreach f [split [string trim [read $fh]] "\n"] { read_verilog $f }
close $fh
read_xdc ${top}.xdc
synth_design -top $top -part $part -mode out_of_context
opt_design
place_design
route_design
report_utilization -file xc7_utilization.rpt
report_timing_summary -file xc7_timing.rpt
