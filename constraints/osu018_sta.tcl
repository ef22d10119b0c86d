# OpenSTA (Debian package opensta): static timing of the buffered netlist against the SDC.
# warpforge replaces @LIB@, @NETLIST@, @TOP@ and @SDC@; run it with `sta -no_splash -exit`.
read_liberty @LIB@
read_verilog @NETLIST@
link_design @TOP@
read_sdc @SDC@
report_checks -path_delay max -fields {fanout cap} -digits 3 -group_count 1
report_wns
report_tns
