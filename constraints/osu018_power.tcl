# OpenSTA (Debian package opensta): its own power estimate of the buffered netlist, the
# cross-check `warpforge power` prints beside its figures. warpforge replaces @LIB@,
# @NETLIST@, @TOP@, @SDC@, @PERIOD_NS@ and the activities measured in co-simulation
# (transitions per clock cycle): @ACTIVITY@ (every net, the mean of the RTL's bits),
# @INPUT_ACTIVITY@ (the unit's inputs), @FLOP_ACTIVITY@ (flip-flop outputs, the RTL's
# registers). Run it with `sta -no_splash -exit osu018_power.tcl`.
read_liberty @LIB@
read_verilog @NETLIST@
link_design @TOP@
read_sdc @SDC@
create_clock -name clk -period @PERIOD_NS@ [get_ports clk]
set_power_activity -global -activity @ACTIVITY@
set_power_activity -input -activity @INPUT_ACTIVITY@
set_power_activity -pins [all_registers -output_pins] -activity @FLOP_ACTIVITY@
report_power
