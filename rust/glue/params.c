// SPDX-License-Identifier: GPL-2.0
/*
 * The module parameters of crem.ko: module_param is a macro, and the
 * module! macro of 6.12's Rust has no parameters. Rust reads them
 * (rust/collector.rs, rust/socket.rs).
 */
#include <linux/moduleparam.h>
#include "crem_glue.h"

/* Seconds without packets or messages before a flow is removed; 0: never. */
unsigned int crem_flow_idle_s = 30;
module_param_named(flow_idle_s, crem_flow_idle_s, uint, 0644);
MODULE_PARM_DESC(flow_idle_s, "seconds a flow may stay idle before it is removed (0 = never)");

#ifdef CREM_TEST_BUILD
/* The test build's fault injection (rust/socket.rs), a module parameter. */
unsigned int crem_fault_corrupt_repair;
module_param_named(fault_corrupt_repair, crem_fault_corrupt_repair, uint, 0644);
MODULE_PARM_DESC(fault_corrupt_repair, "test only: corrupt every Nth coded REPAIR sent (0 = never)");
#endif
