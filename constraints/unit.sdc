# Timing constraints of one warpforge unit (every unit has one clock, `clk`, and a
# synchronous active-low reset `rst_n` that is an ordinary input here).
#
# warpforge renders this file per unit and parameter set with the target's clock period
# (constraints/targets.toml) in place of @PERIOD_NS@; it reads the same way in any SDC tool:
#   set clk_period 4.0 ; read_sdc unit.sdc   (after replacing @PERIOD_NS@ by $clk_period)
#
# Inputs arrive, and outputs are needed, 20% of the period from the clock edge: the unit
# sits between registers of the SM, and that is the share of the cycle the wires and the
# logic around it take. Inputs are driven by an INVX1-class cell; outputs drive 20 fF.
set clk_period @PERIOD_NS@
create_clock -name clk -period $clk_period [get_ports clk]
set data_inputs [delete_from_list [all_inputs] [get_ports clk]]
set_input_delay [expr 0.2 * $clk_period] -clock clk $data_inputs
set_output_delay [expr 0.2 * $clk_period] -clock clk [all_outputs]
set_driving_cell -lib_cell @DRIVER_CELL@ $data_inputs
set_load 0.02 [all_outputs]
