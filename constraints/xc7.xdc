# Xilinx XDC of one warpforge unit (Vivado), the counterpart of unit.sdc: one clock `clk`
# at the xilinx target period of constraints/targets.toml, every other input arriving and
# every output needed 20% of the period from the edge (the unit sits between registers of
# the SM). `warpforge synth --target xilinx` renders it per unit and parameter set
# (@PERIOD_NS@ filled in) beside `xc7_vivado.tcl`, which runs an out-of-context
# implementation with it. Pins are not located: a unit is a block inside a design, not a
# top level (the ECP5 and iCE40 flows place it in its shell for that).
create_clock -name clk -period @PERIOD_NS@ [get_ports clk]
set_input_delay -clock clk [expr {0.2 * @PERIOD_NS@}] [get_ports -filter {DIRECTION == IN && NAME != "clk"}]
set_output_delay -clock clk [expr {0.2 * @PERIOD_NS@}] [get_ports -filter {DIRECTION == OUT}]
